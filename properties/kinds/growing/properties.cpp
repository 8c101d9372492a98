// The growing kind's properties (shared statements, the growth rule, an unbounded generation loop) and its table row.
#include "properties/generate/generation.h"
#include "properties/generate/rows_generators.h"
#include "properties/generate/statements.h"
#include "properties/kinds/kind.h"

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
}

extern const kind_spec growing_spec;
/// The kind's row of the kind table (properties/kinds/kind.h).
extern const kind_descriptor growing_kind = rows_kind<grow>(growing_spec, add_growing_properties);

}  // namespace kvconform::kinds
