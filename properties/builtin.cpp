// The built-in implementations; each goes through the same adapter a third party's type would.
#include "impls/beam.h"
#include "impls/flat.h"
#include "impls/mutants/beam_reorder_aliases.h"
#include "impls/mutants/beam_reorder_layer0_only.h"
#include "impls/mutants/beam_truncate_stale_length.h"
#include "impls/mutants/flat_strict_capacity.h"
#include "impls/mutants/ring_bulk_keeps_first.h"
#include "impls/mutants/ring_head_off_by_one.h"
#include "impls/ring.h"
#include "properties/beam_concept.h"
#include "properties/concepts.h"
#include "properties/registry.h"

namespace kvconform {

const std::vector<implementation>& builtin_implementations() {
  static const std::vector<implementation> all = {
      make_implementation<flat>("flat", "reference", "fixed-capacity cache, double, two-pass softmax"),
      make_implementation<ring>("ring", "reference", "sliding-window ring of W rows, double, two-pass softmax"),
      make_implementation<beam>("beam", "reference", "layers x batch x kv heads with prefill, rollback, reorder, GQA and masks; double, two-pass softmax"),
      make_implementation<mutants::flat_strict_capacity>(
          "flat-strict-capacity", "mutant", "seed bug: `>=` capacity check wastes the last slot; exact_fill should kill it"),
      make_implementation<mutants::ring_head_off_by_one>(
          "ring-head-off-by-one", "mutant", "peer bug 2: read start off by one after the first wrap; ring_window_last_steps should kill it"),
      make_implementation<mutants::ring_bulk_keeps_first>(
          "ring-bulk-keeps-first", "mutant", "peer bugs 17/18: an append of n > W keeps the first W rows; ring_window_last_steps should kill it"),
      make_implementation<mutants::beam_reorder_layer0_only>(
          "beam-reorder-layer0-only", "mutant", "peer bug 3: reorder gathers layer 0 only; beam_reorder_gathers should kill it"),
      make_implementation<mutants::beam_reorder_aliases>(
          "beam-reorder-aliases", "mutant", "seed: a repeated row shares its twin's storage after reorder; beam_reorder_gathers should kill it"),
      make_implementation<mutants::beam_truncate_stale_length>(
          "beam-truncate-stale-length", "mutant", "seed: truncation keeps the stale length; beam_rollback_truncates should kill it"),
  };
  return all;
}

const implementation* find_implementation(const std::string& name) {
  for (const implementation& i : builtin_implementations())
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace kvconform
