// The flat zoo: mutants and valid variants (docs/mutants.md).
#include "impls/flat/flat.h"
#include "impls/flat/mutants/attention_bugs.h"
#include "impls/flat/mutants/counter_before_check.h"
#include "impls/flat/mutants/format_bugs.h"
#include "impls/flat/mutants/kernel_bugs.h"
#include "impls/flat/mutants/length_from_content.h"
#include "impls/flat/mutants/modifies_query.h"
#include "impls/flat/mutants/no_copy.h"
#include "impls/flat/mutants/partial_write.h"
#include "impls/flat/mutants/row_count_bugs.h"
#include "impls/flat/mutants/row_zero.h"
#include "impls/flat/mutants/size_paths.h"
#include "impls/flat/mutants/sparse_bugs.h"
#include "impls/flat/mutants/speculation_bugs.h"
#include "impls/flat/mutants/strict_capacity.h"
#include "impls/flat/mutants/whole_buffer_views.h"
#include "impls/flat/variants/decode_variants.h"
#include "impls/flat/variants/f32.h"
#include "impls/flat/variants/format_variants.h"
#include "properties/kinds/flat/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

namespace {
std::vector<implementation> mutant_list() {
  using namespace mutants;
  constexpr const char *refused = "refused_append_unchanged", *bound = "decode_within_bound";
  constexpr const char* stored = "order_preserved";  // checks every stored row after many appends
  return {
      mutant<flat_strict_capacity>("flat-strict-capacity", "exact_fill", "a `>=` capacity check wastes the last slot"),
      mutant<flat_counter_before_check>("flat-counter-before-check", refused, "length bumped before the check"),
      mutant<flat_whole_buffer_views>("flat-whole-buffer-views", "views_filled_rows", "views show all max_len rows"),
      mutant<flat_row_zero>("flat-row-zero", "order_preserved", "every append is written from row 0"),
      mutant<flat_no_copy>("flat-no-copy", "copy_semantics", "keeps the caller's arrays instead of copies"),
      mutant<flat_bonus_slot_off>("flat-bonus-slot-off", "speculative_rounds", "vLLM #9730: bonus step one slot off"),
      mutant<flat_rollback_shifted>("flat-rollback-shifted", "speculative_rounds",
                                    "llama.cpp #22746: a second rollback shifted by the first"),
      mutant<flat_chunk_offset>("flat-chunk-offset", "prefill_chunked_equals_whole",
                                "vLLM #26042: a chunk's causal mask from its own start"),
      mutant<flat_modifies_query>("flat-modifies-query", "copy_semantics", "decode scales the caller's q in place"),
      mutant<flat_partial_write>("flat-partial-write", refused, "a step mismatch found after rows went in"),
      mutant<flat_length_from_content>("flat-length-from-content", "order_preserved", "transformers #30377: zero keys"),
      mutant<flat_naive_softmax>("flat-naive-softmax", "large_scores", "softmax without subtracting the max"),
      mutant<flat_no_scale>("flat-no-scale", bound, "the 1/sqrt(d_k) scale forgotten"),
      mutant<flat_float_scores>("flat-float-scores", bound, "scores accumulated in float in a double cache"),
      mutant<flat_float_values>("flat-float-values", bound, "the weighted sum of values accumulated in float"),
      mutant<flat_expf>("flat-expf", bound, "expf where exp was meant"),
      mutant<flat_max_from_row0>("flat-max-from-row0", "large_scores", "the max taken from row 0 only"),
      mutant<flat_max_first_32_rows>("flat-max-first-32-rows", bound,
                                     "the max taken over the first 32 rows only (a tiled kernel's first tile)"),
      mutant<flat_drop_tiny_weights>("flat-drop-tiny-weights", bound,
                                     "weights below 1e-300 dropped from the normaliser and the output"),
      mutant<flat_extra_zero_row>("flat-extra-zero-row", bound, "decode over an extra zero row"),
      mutant<flat_last_row_dropped>("flat-last-row-dropped", bound, "decode drops the newest row"),
      mutant<flat_wide_lane_dropped>("flat-wide-lane-dropped", "generation_fills_capacity",
                                     "a wide path for heads >= 32 drops a lane"),
      mutant<flat_bulk_count_u8>("flat-bulk-count-u8", stored, "a uint8_t row count in bulk appends"),
      mutant<flat_fp16_half_away>("flat-fp16-half-away", stored, "fp16 ties rounded half away from zero"),
      mutant<flat_fp16_flush_subnormals>("flat-fp16-flush-subnormals", stored, "fp16 subnormals flushed to zero"),
      mutant<flat_q8_signed_max>("flat-q8-signed-max", stored, "q8_0 scale from max(x), not max|x|"),
      mutant<flat_q4_nibble_swap>("flat-q4-nibble-swap", stored, "int4 codes unpacked from the wrong nibbles"),
      mutant<flat_q4_zero_off_by_one>("flat-q4-zero-off-by-one", stored, "q4_1 zero point one code off"),
      mutant<flat_q4_fp16_range>("flat-q4-fp16-range", stored, "q4_1 range max - min in fp16 overflows"),
      mutant<flat_kivi_residual_never>("flat-kivi-residual-never", stored, "residual checked once per append"),
      mutant<flat_kivi_stale_scales>("flat-kivi-stale-scales", stored, "a completed group reuses old channel scales"),
      mutant<flat_sink_key0_bias>("flat-sink-key0-bias", bound, "vLLM PR #49815: the sink as a bias on key 0's logit"),
      mutant<flat_sink_dropped_in_window>("flat-sink-dropped-in-window", bound,
                                          "SGLang PR #11634: the windowed path leaves the learned sink out"),
      mutant<flat_chunk_boundary_off>("flat-chunk-boundary-off", bound,
                                      "transformers #37351: chunk boundaries one position off"),
      mutant<flat_window_ignored_short>("flat-window-ignored-short", bound,
                                        "SGLang PR #30050: the window ignored up to 128 rows"),
      mutant<flat_cap_after_softmax>("flat-cap-after-softmax", bound, "the soft cap applied after the softmax"),
      mutant<flat_topk_per_head>("flat-topk-per-head", bound, "mlx-lm PR #531: top-k taken per index head"),
      mutant<flat_index_no_relu>("flat-index-no-relu", bound, "mlx-lm PR #531: the indexer's ReLU missing"),
      mutant<flat_index_planar_as_interleaved>("flat-index-planar-as-interleaved", bound,
                                               "vLLM #50576: a block-planar fp8 index cache read as interleaved"),
  };
}

std::vector<implementation> variant_list() {
  using namespace variants;
  return {
      variant<flat_f32>("flat-f32", "float32 storage and arithmetic, declared f32"),
      variant<flat_online>("flat-online", "online softmax, declared block of 4 keys"),
      variant<flat_exp2_fma>("flat-exp2-fma", "FlashAttention-style exp2 with the scale folded into an FMA"),
      variant<flat_pairwise>("flat-pairwise", "pairwise summation of dots, normaliser and output"),
      variant<flat_reversed>("flat-reversed", "every sum in reverse order"),
      variant<flat_split_k>("flat-split-k", "split-K over 3 chunks combined with exp(m_s - M)"),
      variant<flat_q8_fused>("flat-q8-fused", "q8_0 decode with dequantization fused into the dot products"),
      variant<flat_q8_f32_scales>("flat-q8-f32-scales", "q8_0 blocks with f32 scales, declared f32"),
      variant<flat_q4_lut>("flat-q4-lut", "q4_1 codes unpacked through a lookup table"),
      variant<flat_e4m3_table>("flat-e4m3-table", "e4m3 conversion by search in the table of its values"),
  };
}
}  // namespace

std::vector<implementation> flat_zoo() {
  std::vector<implementation> all = mutant_list();
  for (implementation& i : variant_list()) all.push_back(std::move(i));
  return all;
}

}  // namespace kvconform::kinds
