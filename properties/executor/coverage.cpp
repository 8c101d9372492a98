// The common events of every kind, each kind's whole event list, and the counts a property's traces add up to.
#include "properties/executor/coverage.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "properties/executor/subject.h"
#include "oracle/numeric/input_class.h"
#include "properties/executor/kind_table.h"

namespace kvconform {

namespace {
bool decodes(const implementation& i) { return i.capabilities.has(capability::decode); }
bool decodes_rounded(const implementation& i) { return decodes(i) && i.profile.rounds_storage(); }

/// Events every kind's traces can hit whatever the kind, decided by the config alone. A shape
/// event is one line here (or in a kind's own list, when only that kind has the shape).
const event config_event_list[] = {
    {"one-wide keys", "d_k = 1: every score is one product", false, nullptr,
     [](const cache_config& c) { return c.d_k == 1; }},
    {"wide head", "d_k of 32 or more, as production models have (a production case, docs/design.md §4.4)", true,
     unlimited, [](const cache_config& c) { return c.d_k >= 32; }},
    {"long cache", "a capacity (window, growth step, a pool's blocks times their rows) above 256 rows (a long case)",
     true, unlimited, [](const cache_config& c) { return c.capacity * std::max<std::size_t>(1, c.block_size) > 256; }},
};

/// A kind's whole list: its own events, "refused op", "stored infinity", one per input class, the config events.
struct kind_events {
  std::vector<event> all;
  std::size_t refused = 0, infinity = 0, classes = 0;
};

kind_events build(cache_kind k) {
  static const std::vector<std::string> class_names = [] {
    std::vector<std::string> n;
    for (int c = 0; c <= static_cast<int>(input_class::format_edges); ++c)
      n.push_back(std::string("class ") + to_string(static_cast<input_class>(c)));
    return n;
  }();
  kind_events e;
  const std::span<const event> own = kind_of(k).coverage.events;
  e.all.assign(own.begin(), own.end());
  e.refused = e.all.size();
  e.all.push_back({"refused op", "the model refused an op (any reason): the state must not change", true});
  e.infinity = e.all.size();
  e.all.push_back({"stored infinity",
                   "a decode attended over a stored +-inf key or value, a format's overflow (docs/numerics.md §4.5)",
                   false, decodes_rounded});
  e.classes = e.all.size();
  for (std::size_t c = 0; c < class_names.size(); ++c) {
    const bool edges = c == static_cast<std::size_t>(input_class::format_edges);
    e.all.push_back({class_names[c].c_str(),
                     "the trace drew this input class (docs/numerics.md §4.1) and the model accepted a decode of it",
                     true, edges ? decodes_rounded : decodes});
  }
  e.all.insert(e.all.end(), std::begin(config_event_list), std::end(config_event_list));
  if (e.all.size() > max_events) throw std::logic_error("a kind declares more than max_events events");
  return e;
}

const kind_events& table(cache_kind k) {
  static const std::vector<kind_events> all = [] {
    std::vector<kind_events> t;
    for (const kind_descriptor* d : all_kinds()) t.push_back(build(d->spec.kind));
    return t;
  }();
  return all.at(static_cast<std::size_t>(k));
}
}  // namespace

const std::vector<event>& events_of(cache_kind k) { return table(k).all; }
std::size_t refused_event(cache_kind k) { return table(k).refused; }
std::size_t infinity_event(cache_kind k) { return table(k).infinity; }
std::size_t class_event(cache_kind k, input_class c) { return table(k).classes + static_cast<std::size_t>(c); }

event_set config_events(const cache_config& c) {
  event_set hit;
  const std::vector<event>& all = events_of(c.kind);
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].on_config && all[i].on_config(c)) hit.set(i);
  return hit;
}

bool event_applies(const event& e, const implementation& impl) { return !e.applies || e.applies(impl); }
bool unlimited(const implementation& impl) { return impl.config_limits.empty(); }

void coverage_counts::add(const event_set& e, std::size_t events) {
  ++traces;
  hits.resize(std::max(hits.size(), events));
  for (std::size_t i = 0; i < hits.size(); ++i) hits[i] += e.test(i);
}

void coverage_counts::merge(const coverage_counts& o) {
  traces += o.traces;
  hits.resize(std::max(hits.size(), o.hits.size()));
  for (std::size_t i = 0; i < o.hits.size(); ++i) hits[i] += o.hits[i];
}

bool generator_disabled(const char* name) {
  const char* v = std::getenv("KVCONFORM_TEST_DISABLE_GENERATOR");  // read each time, so that a test can set it
  return v && ("," + std::string(v) + ",").find("," + std::string(name) + ",") != std::string::npos;
}

}  // namespace kvconform
