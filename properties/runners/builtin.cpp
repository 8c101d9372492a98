// The built-in implementations; each goes through the same adapter a third party's type would.
#include "impls/beam/beam.h"
#include "impls/flat/flat.h"
#include "impls/beam/mutants/mask_sentinel.h"
#include "impls/beam/mutants/reorder_aliases.h"
#include "impls/beam/mutants/reorder_layer0_only.h"
#include "impls/beam/mutants/truncate_stale_length.h"
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
#include "impls/paged/mutants/fork_without_cow.h"
#include "impls/paged/mutants/leak_on_refusal.h"
#include "impls/paged/mutants/refcount_per_entry.h"
#include "impls/ring/mutants/bulk_keeps_first.h"
#include "impls/ring/mutants/head_off_by_one.h"
#include "impls/paged/paged.h"
#include "impls/ring/ring.h"
#include "impls/flat/variants/f32.h"
#include "impls/flat/variants/decode_variants.h"
#include "properties/kinds/beam/adapter.h"
#include "properties/executor/adapter.h"
#include "properties/kinds/paged/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform {

namespace {
template <class C>
implementation mutant(std::string name, std::string note, std::string killer) {
  implementation i = make_implementation<C>(std::move(name), "mutant", std::move(note));
  i.killer = std::move(killer);
  return i;
}
template <class C>
implementation variant(std::string name, std::string note) {
  return make_implementation<C>(std::move(name), "variant", std::move(note));
}
}  // namespace

const std::vector<implementation>& builtin_implementations() {
  using namespace mutants;
  using namespace variants;
  static const std::vector<implementation> all = {
      make_implementation<flat>("flat", "reference", "fixed-capacity cache, double, two-pass softmax"),
      make_implementation<ring>("ring", "reference", "sliding-window ring of W rows, double, two-pass softmax"),
      make_implementation<paged>("paged", "reference", "block pool shared by sequences with fork, copy-on-write and preemption; double, two-pass softmax"),
      make_implementation<beam>("beam", "reference", "layers x batch x kv heads with prefill, rollback, reorder, GQA and masks; double, two-pass softmax"),

      mutant<flat_strict_capacity>("flat-strict-capacity", "seed: `>=` capacity check wastes the last slot", "exact_fill"),
      mutant<flat_counter_before_check>("flat-counter-before-check", "seed: length bumped before the capacity check, kept on refusal", "refused_append_unchanged"),
      mutant<flat_whole_buffer_views>("flat-whole-buffer-views", "seed follow-up: views show all max_len rows", "views_filled_rows"),
      mutant<flat_row_zero>("flat-row-zero", "seed follow-up: every append written from row 0", "order_preserved"),
      mutant<flat_no_copy>("flat-no-copy", "DESIGN 7: keeps the caller's arrays instead of copies", "copy_semantics"),
      mutant<flat_modifies_query>("flat-modifies-query", "DESIGN 7: decode scales the caller's q in place", "copy_semantics"),
      mutant<flat_partial_write>("flat-partial-write", "seed follow-up: k/v step mismatch detected after rows went in", "refused_append_unchanged"),
      mutant<flat_length_from_content>("flat-length-from-content", "peer bug 1 (transformers #30377): all-zero keys vanish from the length", "order_preserved"),
      mutant<flat_naive_softmax>("flat-naive-softmax", "numerics 4.3: softmax without subtracting the max", "large_scores"),
      mutant<flat_no_scale>("flat-no-scale", "numerics 4.3: 1/sqrt(d_k) forgotten", "decode_within_bound"),
      mutant<flat_float_scores>("flat-float-scores", "numerics 4.3: scores accumulated in float in a double cache", "decode_within_bound"),
      mutant<flat_float_values>("flat-float-values", "numerics 4.3: weighted sum of values accumulated in float", "decode_within_bound"),
      mutant<flat_expf>("flat-expf", "numerics 4.3: expf for exp", "decode_within_bound"),
      mutant<flat_max_from_row0>("flat-max-from-row0", "numerics 4.3: the max taken from row 0", "large_scores"),
      mutant<flat_extra_zero_row>("flat-extra-zero-row", "seed wrong answers: decode over an extra zero row", "decode_within_bound"),
      mutant<flat_last_row_dropped>("flat-last-row-dropped", "seed wrong answers: decode drops the newest row", "decode_within_bound"),
      mutant<ring_head_off_by_one>("ring-head-off-by-one", "peer bug 2 (transformers PR #47708): read start off by one after the first wrap", "ring_window_last_steps"),
      mutant<ring_bulk_keeps_first>("ring-bulk-keeps-first", "peer bugs 17/18 (mlx): an append of n > W keeps the first W rows", "ring_window_last_steps"),
      mutant<beam_reorder_layer0_only>("beam-reorder-layer0-only", "peer bug 3 (transformers #46612): reorder gathers layer 0 only", "beam_reorder_gathers"),
      mutant<beam_reorder_aliases>("beam-reorder-aliases", "seed: a repeated row shares its twin's storage after reorder", "beam_reorder_gathers"),
      mutant<beam_truncate_stale_length>("beam-truncate-stale-length", "seed: a rollback keeps the stale length", "beam_rollback_truncates"),
      mutant<beam_mask_sentinel>("beam-mask-sentinel", "peer bug 15 (FlashInfer #4267): a finite -5e4 mask sentinel instead of no weight", "beam_mask_left_padding"),
      mutant<paged_leak_on_refusal>("paged-leak-on-refusal", "DESIGN 7: a refused append keeps the blocks it took before the pool ran dry", "refused_append_unchanged"),
      mutant<paged_fork_without_cow>("paged-fork-without-cow", "DESIGN 7: no copy-on-write, an append writes into a shared, partly filled last block", "paged_copy_on_write"),
      mutant<paged_refcount_per_entry>("paged-refcount-per-entry", "peer bug 5 (vLLM #1556): fork counts a reference per filled slot, not per block", "paged_block_accounting"),

      variant<flat_f32>("flat-f32", "float32 storage and arithmetic, declared f32"),
      variant<flat_online>("flat-online", "online softmax, declared block of 4 keys"),
      variant<flat_exp2_fma>("flat-exp2-fma", "FlashAttention-style exp2 with the scale folded into an FMA"),
      variant<flat_pairwise>("flat-pairwise", "pairwise summation of dots, normaliser and output"),
      variant<flat_reversed>("flat-reversed", "every sum in reverse order"),
      variant<flat_split_k>("flat-split-k", "split-K over 3 chunks combined with exp(m_s - M)"),
  };
  return all;
}

const implementation* find_implementation(const std::string& name) {
  for (const implementation& i : builtin_implementations())
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace kvconform
