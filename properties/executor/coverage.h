// Coverage statistics: the boundary events each trace hit, per kind, from what the trace and the model did.
#pragma once

#include <bitset>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "oracle/models/model.h"

namespace kvconform {

struct implementation;
enum class input_class;

/// The most events one kind may have (its own and the common ones); a unit test checks every kind.
inline constexpr std::size_t max_events = 128;
/// The events one trace hit: bit i is event i of its kind's list (events_of).
using event_set = std::bitset<max_events>;

/// A boundary event a trace may hit, in the manner of RapidCheck's RC_TAG and Hypothesis's `event`
/// (docs/design.md §4.6). `gate --stats` prints how many traces hit each; a required event that no
/// trace of a quick run hit fails the run, since a generator no longer makes it.
struct event {
  const char* name;
  const char* summary;    ///< what a trace must do to count
  bool required = false;  ///< the guard: every quick run of an implementation it applies to hits it
  /// Whether it can happen for an implementation (a capability, a storage format); nullptr: always.
  bool (*applies)(const implementation&) = nullptr;
  /// Hit by every trace whose config satisfies this (a shape event is one line); nullptr: the probe decides.
  bool (*on_config)(const cache_config&) = nullptr;
};

/// Watches one trace's ops and marks the kind's own events they hit, from the model's state before
/// and after each op and what it expected. It never sees the implementation: an event says what the
/// trace asked of the cache, whatever the cache did.
class event_probe {
 public:
  virtual ~event_probe() = default;
  /// Before the model applies `o` (`m` is the state the op meets).
  virtual void before(const model& m, const op& o) {
    (void)m;
    (void)o;
  }
  /// After the model applied `o`; `e` is what it expected (accepted, refusals, problems, victims).
  virtual void after(const model& m, const op& o, const expectation& e, event_set& hit) = 0;
};

/// A probe's view of the model: a kind's probe only ever meets its own kind's model.
template <class Model>
const Model& model_as(const model& m) {
  return static_cast<const Model&>(m);
}

/// The probe factory of a coverage_spec for a probe type constructible from the config.
template <class Probe>
std::unique_ptr<event_probe> make_probe(const cache_config& c) {
  return std::make_unique<Probe>(c);
}

/// A kind's part of the coverage statistics, in its row of the kind table: its own events (the
/// probe marks them by their index here) and the probe. The common events follow them (events_of).
struct coverage_spec {
  std::span<const event> events;
  std::unique_ptr<event_probe> (*probe)(const cache_config& c) = nullptr;
};

/// Every event of a kind: its own, then the common ones: a refused op, a stored infinity, one per input
/// class (a trace of that class with an accepted decode), and the config events.
const std::vector<event>& events_of(cache_kind k);
/// Index of the common event "refused op" in events_of(k).
std::size_t refused_event(cache_kind k);
/// Index of the common event "stored infinity" (a decode over a stored ±inf) in events_of(k).
std::size_t infinity_event(cache_kind k);
/// Index of the input class event of `c` in events_of(k).
std::size_t class_event(cache_kind k, input_class c);
/// The config events a trace with config `c` hits from its start.
event_set config_events(const cache_config& c);
/// Whether event `e` applies to `impl` (its `applies`, else always).
bool event_applies(const event& e, const implementation& impl);
/// Whether `impl` declares no config limits (a port may, docs/port-protocol.md §3): then the production
/// and long shapes of every profile reach it as drawn (docs/design.md §4.4), and their events apply.
bool unlimited(const implementation& impl);

/// How often a property's traces hit each event of its kind.
struct coverage_counts {
  std::size_t traces = 0;
  std::vector<std::size_t> hits;  ///< per event of the kind's list: traces that hit it
  void add(const event_set& e, std::size_t events);
  void merge(const coverage_counts& o);
  std::size_t count(std::size_t event) const { return event < hits.size() ? hits[event] : 0; }
};

/// A test-only hook (docs/design.md §4.6): whether the environment variable
/// KVCONFORM_TEST_DISABLE_GENERATOR names this generator choice (a comma-separated list), so that
/// a test can prove that the coverage guard notices a generator that no longer makes its event.
bool generator_disabled(const char* name);

}  // namespace kvconform
