// The growing kind's properties (shared statements, the growth rule, an unbounded generation loop) and its table row.
#include "properties/executor/kind_table.h"
#include "properties/executor/speculation_events.h"
#include "properties/generate/generation.h"
#include "properties/generate/rows_generators.h"
#include "properties/generate/statements.h"

namespace kvconform::kinds {

namespace {
constexpr cache_kind growing = cache_kind::growing;
constexpr auto grow = rows_model::full::grow;

/// Prompt of `size` tokens, then greedy generation across many growth steps: nothing is refused.
void generate_across_steps(session& s, const cache_config& c, std::uint64_t seed, std::size_t size) {
  drive_generation(s, c, seed, size, 3 * c.capacity + 2);
}
}  // namespace

void add_growing_properties(std::vector<property>& ps) {
  add_rows_statements(ps, growing, grow);
  auto& memory = add_property(ps, growing, "growing_memory_follows_rule",
                              "reserved rows are whole growth steps, the fewest that hold every row, after appends "
                              "ending at, before and past step boundaries and bulk appends of several steps");
  memory.generate = rows_cases(grow, {.append = 3, .fill = 4, .overfill = 3, .empty = 1, .decode = 0});
  memory.long_traces = true;
  auto& unbounded = add_property(ps, growing, "growing_generation_unbounded",
                                 "a generation loop goes on across many growth steps, attending to every step");
  unbounded.needs = {capability::decode};
  unbounded.drive = generate_across_steps;
  unbounded.generate = rows_cases(grow, {});  // configs only: the driver makes the ops
  add_speculation_properties(ps, growing, grow);
}

namespace {
/// The growing kind's own boundary events (docs/design.md §4.6), in the order of `event_index`.
enum event_index : std::size_t { exact_fill_event, grows_event, bulk_event, several_event, speculation_events };
constexpr event events[] = {
    {"exact fill", "an accepted append ends exactly at a growth step: the reserved rows are all filled", true},
    {"growth", "an accepted append reserves another step", true},
    {"bulk append longer than a step", "an accepted append of n > S steps", true},
    {"growth by several steps", "an accepted append reserves two or more steps at once", true},
    rollback_to_empty_event,
    accept_all_event,
    reject_all_event,
};

struct probe final : event_probe {
  explicit probe(const cache_config&) {}
  std::size_t before_size = 0;
  speculation_probe speculation;
  void before(const model& m, const op&) override { before_size = model_as<rows_model>(m).size(); }
  void after(const model& m, const op& o, const expectation& e, event_set& hit) override {
    speculation.after(o, e, model_as<rows_model>(m).size(), hit, speculation_events);
    if ((o.kind != op_kind::append && o.kind != op_kind::prefill) || !e.accepted) return;
    const auto& rows = model_as<rows_model>(m);
    const std::size_t step = rows.config().capacity, size = rows.size(), n = size - before_size;
    if (n == 0) return;
    const std::size_t grown = (size + step - 1) / step - (before_size + step - 1) / step;
    if (size % step == 0) hit.set(exact_fill_event);
    if (grown >= 1) hit.set(grows_event);
    if (n > step) hit.set(bulk_event);
    if (grown >= 2) hit.set(several_event);
  }
};
}  // namespace

extern const kind_spec growing_spec;
/// The kind's row of the kind table (properties/executor/kind_table.h).
extern const kind_descriptor growing_kind =
    rows_kind<grow>(growing_spec, add_growing_properties, {events, make_probe<probe>});

}  // namespace kvconform::kinds
