// The flat kind's properties (shared statements, exact fill, generation loop, worked example) and its table row.
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
  add_speculation_properties(ps, flat, rows_model::full::refuse);
}

namespace {
/// The flat kind's own boundary events (docs/design.md §4.6), in the order of `event_index`.
enum event_index : std::size_t { exact_fill_event, full_event, speculation_events };
constexpr event events[] = {
    {"exact fill", "an accepted append ends exactly at capacity", true},
    {"refused: full", "an append refused for capacity alone: len + n > capacity", true},
    rollback_to_empty_event,
    accept_all_event,
    reject_all_event,
};

struct probe final : event_probe {
  explicit probe(const cache_config&) {}
  speculation_probe speculation;
  void after(const model& m, const op& o, const expectation& e, event_set& hit) override {
    const auto& rows = model_as<rows_model>(m);
    speculation.after(o, e, rows.size(), hit, speculation_events);
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
