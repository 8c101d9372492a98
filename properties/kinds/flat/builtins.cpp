// The built-in flat caches: the reference, its mutants (docs/mutants.md) and its valid variants.
#include "impls/flat/flat.h"
#include "impls/flat/mutants/counter_before_check.h"
#include "impls/flat/mutants/kernel_bugs.h"
#include "impls/flat/mutants/length_from_content.h"
#include "impls/flat/mutants/modifies_query.h"
#include "impls/flat/mutants/no_copy.h"
#include "impls/flat/mutants/partial_write.h"
#include "impls/flat/mutants/row_count_bugs.h"
#include "impls/flat/mutants/row_zero.h"
#include "impls/flat/mutants/strict_capacity.h"
#include "impls/flat/mutants/whole_buffer_views.h"
#include "impls/flat/variants/decode_variants.h"
#include "impls/flat/variants/f32.h"
#include "properties/kinds/flat/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

namespace {
constexpr auto mutant = impl_group::mutant;

/// Mutants of the contract: capacity, views, copies, refusals.
std::vector<implementation> contract_mutants() {
  using namespace mutants;
  return {
      make_implementation<flat_strict_capacity>({"flat-strict-capacity", mutant,
                                                 "lost-last-slot task: a `>=` capacity check wastes the last slot",
                                                 "exact_fill"}),
      make_implementation<flat_counter_before_check>(
          {"flat-counter-before-check", mutant,
           "lost-last-slot task: the length is bumped before the capacity check and kept on refusal",
           "refused_append_unchanged"}),
      make_implementation<flat_whole_buffer_views>({"flat-whole-buffer-views", mutant,
                                                    "fixed-capacity task follow-up: views show all max_len rows",
                                                    "views_filled_rows"}),
      make_implementation<flat_row_zero>({"flat-row-zero", mutant,
                                          "fixed-capacity task follow-up: every append is written from row 0",
                                          "order_preserved"}),
      make_implementation<flat_no_copy>(
          {"flat-no-copy", mutant, "keeps the caller's arrays instead of copies", "copy_semantics"}),
      make_implementation<flat_modifies_query>(
          {"flat-modifies-query", mutant, "decode scales the caller's q in place", "copy_semantics"}),
      make_implementation<flat_partial_write>(
          {"flat-partial-write", mutant,
           "fixed-capacity task follow-up: a k/v step mismatch is detected after rows went in",
           "refused_append_unchanged"}),
      make_implementation<flat_length_from_content>({"flat-length-from-content", mutant,
                                                     "transformers #30377: all-zero keys vanish from the length",
                                                     "order_preserved"}),
  };
}

/// Mutants of the decode arithmetic and of the rows decode reads.
std::vector<implementation> decode_mutants() {
  using namespace mutants;
  return {
      make_implementation<flat_naive_softmax>(
          {"flat-naive-softmax", mutant, "softmax without subtracting the max", "large_scores"}),
      make_implementation<flat_no_scale>(
          {"flat-no-scale", mutant, "the 1/sqrt(d_k) scale forgotten", "decode_within_bound"}),
      make_implementation<flat_float_scores>(
          {"flat-float-scores", mutant, "scores accumulated in float in a double cache", "decode_within_bound"}),
      make_implementation<flat_float_values>(
          {"flat-float-values", mutant, "the weighted sum of values accumulated in float", "decode_within_bound"}),
      make_implementation<flat_expf>({"flat-expf", mutant, "expf where exp was meant", "decode_within_bound"}),
      make_implementation<flat_max_from_row0>(
          {"flat-max-from-row0", mutant, "the max taken from row 0 only", "large_scores"}),
      make_implementation<flat_extra_zero_row>({"flat-extra-zero-row", mutant,
                                                "fixed-capacity task wrong answer: decode over an extra zero row",
                                                "decode_within_bound"}),
      make_implementation<flat_last_row_dropped>({"flat-last-row-dropped", mutant,
                                                  "fixed-capacity task wrong answer: decode drops the newest row",
                                                  "decode_within_bound"}),
  };
}

std::vector<implementation> valid_variants() {
  using namespace variants;
  constexpr auto variant = impl_group::variant;
  return {
      make_implementation<flat_f32>({"flat-f32", variant, "float32 storage and arithmetic, declared f32"}),
      make_implementation<flat_online>({"flat-online", variant, "online softmax, declared block of 4 keys"}),
      make_implementation<flat_exp2_fma>(
          {"flat-exp2-fma", variant, "FlashAttention-style exp2 with the scale folded into an FMA"}),
      make_implementation<flat_pairwise>(
          {"flat-pairwise", variant, "pairwise summation of dots, normaliser and output"}),
      make_implementation<flat_reversed>({"flat-reversed", variant, "every sum in reverse order"}),
      make_implementation<flat_split_k>({"flat-split-k", variant, "split-K over 3 chunks combined with exp(m_s - M)"}),
  };
}
}  // namespace

std::vector<implementation> flat_builtins() {
  std::vector<implementation> all = {
      make_implementation<flat>({"flat", impl_group::reference, "fixed-capacity cache, double, two-pass softmax"})};
  for (auto part : {contract_mutants(), decode_mutants(), valid_variants()})
    all.insert(all.end(), part.begin(), part.end());
  return all;
}

}  // namespace kvconform::kinds
