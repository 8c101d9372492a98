// The hybrid reference's policy choices (docs/kinds/hybrid.md "Policies"), and what each declares.
#pragma once

#include "impls/common/declaring.h"
#include "impls/hybrid/hybrid.h"

namespace kvconform {

struct hybrid_next_step_rules : hybrid_rules {
  static constexpr bool next_step = true;
};
struct hybrid_refused_frees_rules : hybrid_rules {
  static constexpr bool refused_frees = true;
};
struct hybrid_vllm_rules : hybrid_rules {
  static constexpr bool next_step = true, refused_frees = true;
};

namespace policies {
inline constexpr policy next_step[] = {{"sliding_free", "next_step"}};
inline constexpr policy frees_passed[] = {{"refused_append", "frees_passed"}};
inline constexpr policy vllm_hybrid[] = {{"sliding_free", "next_step"}, {"refused_append", "frees_passed"}};
}  // namespace policies

/// vLLM v1's hybrid allocator: both its choices, and no attention sinks.
struct hybrid_vllm : declaring<basic_hybrid<hybrid_vllm_rules>, policies::vllm_hybrid> {
  using declaring::declaring;
  static constexpr bool sinks = false;
};

}  // namespace kvconform
