// A ring computing a declared attention (docs/numerics.md §7): gpt-oss's sliding layer, its heads with learned sinks.
#pragma once

#include "impls/ring/ring.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// gpt-oss's sliding layer: the config's window (and `keep` rows, if any), every decode with a learned sink.
struct ring_sinks_rules : ring_rules {
  static constexpr attention_semantics attention{.sinks = sink_kind::learned};
};
struct ring_gpt_oss : basic_ring<ring_sinks_rules> {
  using basic_ring::basic_ring;
  static constexpr numeric_profile profile{.attention = ring_sinks_rules::attention};
};

}  // namespace kvconform
