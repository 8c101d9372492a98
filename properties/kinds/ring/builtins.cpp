// The built-in ring caches: the reference and its mutants (docs/mutants.md).
#include "impls/ring/mutants/bulk_keeps_first.h"
#include "impls/ring/mutants/head_off_by_one.h"
#include "impls/ring/ring.h"
#include "properties/kinds/ring/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> ring_builtins() {
  using namespace mutants;
  constexpr auto mutant = impl_group::mutant;
  return {
      make_implementation<ring>(
          {"ring", impl_group::reference, "sliding-window ring of W rows, double, two-pass softmax"}),
      make_implementation<ring_head_off_by_one>(
          {"ring-head-off-by-one", mutant, "transformers PR #47708: the read start is off by one after the first wrap",
           "ring_window_last_steps"}),
      make_implementation<ring_bulk_keeps_first>({"ring-bulk-keeps-first", mutant,
                                                  "mlx-examples PR #1093: an append of n > W keeps the first W rows",
                                                  "ring_window_last_steps"}),
  };
}

}  // namespace kvconform::kinds
