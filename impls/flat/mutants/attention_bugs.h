// Mutants of declared attention (docs/mutants.md, docs/numerics.md §7), each after an engine's report.
#pragma once

#include <cstddef>

#include "impls/flat/variants/declared_attention.h"

namespace kvconform::mutants {

/// vLLM PR #49815: the sink applied as a bias on key 0's logit, not as a value-less term of the normaliser.
struct sink_key0_rules : declared_rules {
  struct kernel : attention_kernel {
    static constexpr bool sink_as_key0_bias = true;
  };
};
/// SGLang PR #11634: the windowed path's kernel leaves the sink out.
struct sink_dropped_rules : declared_rules {
  static constexpr bool sink_in_window = false;
};
/// transformers #37351: chunk boundaries one position off ((p + 1) / C in place of p / C).
struct chunk_off_by_one_rules : declared_rules {
  static bool sees(const attention_semantics& a, std::size_t p, std::size_t r) {
    return r <= p && (r + 1) / a.span == (p + 1) / a.span;
  }
};
/// SGLang PR #30050: `make_mask` ignores the window, invisible for prompts of 128 tokens or fewer.
struct window_ignored_rules : declared_rules {
  static bool sees(const attention_semantics& a, std::size_t p, std::size_t r) { return p < 128 ? r <= p : a.sees(p, r); }
};
/// The soft cap applied to the weights after the softmax instead of to the scores.
struct cap_after_rules : declared_rules {
  struct kernel : attention_kernel {
    static constexpr bool cap_after_softmax = true;
  };
};

using flat_sink_key0_bias = flat_declared<declared::sinks_sliding, sink_key0_rules>;
using flat_sink_dropped_in_window = flat_declared<declared::sinks_sliding, sink_dropped_rules>;
using flat_chunk_boundary_off = flat_declared<declared::chunked, chunk_off_by_one_rules>;
using flat_window_ignored_short = flat_declared<declared::sinks_sliding, window_ignored_rules>;
using flat_cap_after_softmax = flat_declared<declared::softcap, cap_after_rules>;

}  // namespace kvconform::mutants
