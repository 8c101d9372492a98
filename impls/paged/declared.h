// A paged cache computing a declared attention (docs/numerics.md §7): gpt-oss's full layers, heads with learned sinks.
#pragma once

#include "impls/paged/paged.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// Every sequence's decode and prefill attend as `A::value` declares (learned sinks, a soft cap), with the op's sink
/// logits; a window is the paged kind's to refuse. `A` holds `static constexpr attention_semantics value`.
template <class A>
class paged_declared : public basic_paged<> {
 public:
  using basic_paged::basic_paged;
  static constexpr numeric_profile profile{.attention = A::value};

  decode_result decode_step(seq_id s, array_view q, array_view sinks) const {
    return decode_with(s, q, [&] { return declared_terms(A::value, sinks); });
  }
  paged_prefill_result<seq_id> prefill(seq_id s, array_view k, array_view v, array_view q, array_view sinks) {
    return prefill_with(s, k, v, q, [&] { return declared_terms(A::value, sinks); });
  }
};

namespace declared {
/// gpt-oss's full-attention layers: every head with a learned sink.
struct learned_sinks {
  static constexpr attention_semantics value{.sinks = sink_kind::learned};
};
}  // namespace declared

}  // namespace kvconform
