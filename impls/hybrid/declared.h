// Hybrid caches computing a declared attention (docs/numerics.md §7): gpt-oss's sliding and full layers, each head
// with a learned sink.
#pragma once

#include "impls/hybrid/hybrid.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// gpt-oss: every layer, sliding or full, has a learned sink per head (its window is the config's).
struct gpt_oss_rules : hybrid_rules {
  static constexpr attention_semantics attention{.sinks = sink_kind::learned};
};

/// The hybrid reference over `Rules`, declaring the attention they compute.
template <class Rules = gpt_oss_rules>
struct hybrid_declared : basic_hybrid<Rules> {
  using basic_hybrid<Rules>::basic_hybrid;
  static constexpr numeric_profile profile{.attention = Rules::attention};
};
using hybrid_gpt_oss = hybrid_declared<>;

}  // namespace kvconform
