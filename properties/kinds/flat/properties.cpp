// The flat kind's properties (shared statements, exact fill, generation loop, worked example) and its table row.
#include <algorithm>
#include <cmath>

#include "oracle/numeric/attention_oracle.h"
#include "oracle/numeric/top_k.h"
#include "properties/executor/kind_table.h"
#include "properties/executor/speculation_events.h"
#include "properties/generate/generation.h"
#include "properties/generate/rows_generators.h"
#include "properties/generate/statements.h"

namespace kvconform::kinds {

namespace {
constexpr cache_kind flat = cache_kind::flat;

/// Prompt of `size` tokens, then greedy generation until the cache refuses: the model accepts
/// exactly C - P new tokens, so a cache that stops one short (or never) diverges.
void generate_to_capacity(session& s, const cache_config& c, std::uint64_t seed, std::size_t size) {
  drive_generation(s, c, seed, size, c.capacity + 2);
}

/// The fixed-capacity task's worked example, with its numbers exactly as the task states them.
trace seed_worked_example() {
  trace t;
  t.config = {cache_kind::flat, 4, 2, 2};
  t.property = "seed_worked_example";
  const op a1{
      .kind = op_kind::append, .k = tensor::matrix(2, 2, {1, 0, 0, 1}), .v = tensor::matrix(2, 2, {1, 2, 3, 4})};
  const op a2{.kind = op_kind::append, .k = tensor::vector({1, 1}), .v = tensor::vector({5, 6})};
  const op d{.kind = op_kind::decode,
             .q = tensor::vector({1, 0}),
             .expect = pinned{true, 3, {3, 4}, {0.40111209, 0.19777581, 0.40111209}, 8}};
  const op full{.kind = op_kind::append,
                .k = tensor::matrix(2, 2, {1, 2, 3, 4}),
                .v = tensor::matrix(2, 2, {1, 2, 3, 4}),
                .expect = pinned{false, 3, {}, {}, 8}};
  t.ops = {a1, a2, d, full};
  return t;
}

}  // namespace

void add_flat_properties(std::vector<property>& ps) {
  auto& fill = add_property(ps, flat, "exact_fill",
                            "appends that end exactly at capacity are accepted; one more step is refused");
  fill.generate =
      rows_cases(rows_model::full::refuse, {.append = 3, .fill = 4, .overfill = 3, .empty = 1, .decode = 1});
  add_rows_statements(ps, flat, rows_model::full::refuse);

  auto& generation =
      add_property(ps, flat, "generation_fills_capacity",
                   "a generation loop with capacity C = context length appends exactly C - P tokens, then is refused");
  generation.needs = {capability::decode};
  generation.drive = generate_to_capacity;
  generation.generate = rows_cases(rows_model::full::refuse, {});  // configs only: the driver makes the ops

  auto& seed = add_property(
      ps, flat, "seed_worked_example",
      "the seed's worked example: output [3, 4], weights [0.40111209, 0.19777581, 0.40111209], then a refused append");
  seed.needs = {capability::decode};
  seed.fixed = seed_worked_example;
  seed.plain_attention = true;
  add_speculation_properties(ps, flat, rows_model::full::refuse);
}

namespace {
/// The flat kind's own boundary events (docs/design.md §4.6), in the order of `event_index`; the last six are those
/// of declared attention (docs/numerics.md §7), for a cache declaring it.
enum event_index : std::size_t {
  exact_fill_event,
  full_event,
  speculation_events,
  window_event = speculation_events + 3,
  chunk_event,
  sink_event,
  cap_event,
  top_k_event,
  tie_event
};
bool windowed(const implementation& i) { return i.profile.attention.window != window_kind::none; }
bool chunked(const implementation& i) { return i.profile.attention.window == window_kind::chunked; }
bool sinks(const implementation& i) { return i.profile.attention.sinks == sink_kind::learned; }
bool capped(const implementation& i) { return i.profile.attention.softcap > 0; }
bool sparse(const implementation& i) { return i.profile.attention.top_k > 0; }
constexpr event events[] = {
    {"exact fill", "an accepted append ends exactly at capacity", true},
    {"refused: full", "an append refused for capacity alone: len + n > capacity", true},
    rollback_to_empty_event,
    accept_all_event,
    reject_all_event,
    {"window masks a row", "an accepted decode whose declared window leaves out a held row", true, windowed},
    {"prefill crosses a chunk", "an accepted prefill whose steps lie in two chunks or more", true, chunked},
    {"sink above every score", "a decode whose learned sink's logit exceeds every score it attends", true, sinks},
    {"cap bends a score", "a decode with a score beyond half the soft cap, where the cap bends it", true, capped},
    {"top-k leaves rows out", "a query that sees more rows than its declared top-k attends", true, sparse},
    {"index scores tie at the k-th",
     "a query whose k-th and (k+1)-th best index scores lie within their rounding, so that either row is admissible",
     true, sparse},
};

/// The events of declared attention an accepted decode or prefill hits.
void attention_events(const rows_model& rows, const op& o, const expectation& e, event_set& hit) {
  const attention_semantics& a = rows.profile().attention;
  if (a.plain() || !e.accepted) return;
  if (o.kind == op_kind::prefill && a.window == window_kind::chunked && !e.problems.empty()) {
    const std::size_t last = rows.size() - 1, first = last + 1 - e.problems.size();
    if (first / a.span != last / a.span) hit.set(chunk_event);
  }
  for (const attention_problem& p : e.problems) {
    if (p.choice) hit.set(top_k_event);
    if (p.choice && ambiguous_at_k(*p.choice)) hit.set(tie_event);
  }
  if (o.kind != op_kind::decode) return;
  for (const attention_problem& p : e.problems) {
    // A decode's only masks are its window's and its top-k's.
    const bool masked =
        p.choice ? std::count(p.choice->candidate.begin(), p.choice->candidate.end(), 0) > 0 : !p.live.empty();
    if (masked) hit.set(window_event);
    const auto o = attention_oracle<double>(p);  // the scores as declared, capped; masked rows keep 0
    double top = -INFINITY;
    bool bent = false;
    for (std::size_t i = 0; i < p.n; ++i)
      if (p.is_live(i)) top = std::max(top, o.s[i]), bent = bent || std::fabs(o.s[i]) > p.softcap / 2;
    if (p.has_sink && p.sink > top) hit.set(sink_event);
    if (p.softcap > 0 && bent) hit.set(cap_event);
  }
}

struct probe final : event_probe {
  explicit probe(const cache_config&) {}
  speculation_probe speculation;
  void after(const model& m, const op& o, const expectation& e, event_set& hit) override {
    const auto& rows = model_as<rows_model>(m);
    speculation.after(o, e, rows.size(), hit, speculation_events);
    attention_events(rows, o, e, hit);
    if (o.kind != op_kind::append && o.kind != op_kind::prefill) return;
    const auto n = append_steps(o, rows.config().d_k, rows.config().d_v);
    if (e.accepted && n.value_or(0) > 0 && rows.size() == rows.config().capacity) hit.set(exact_fill_event);
    if (!e.accepted && e.reasons == refuse_capacity) hit.set(full_event);
  }
};
}  // namespace

/// The kind's row of the kind table (properties/executor/kind_table.h).
extern const kind_spec flat_spec;
extern const kind_descriptor flat_kind =
    rows_kind<rows_model::full::refuse>(flat_spec, add_flat_properties, {events, make_probe<probe>});

}  // namespace kvconform::kinds
