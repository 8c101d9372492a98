// Valid variants of the recurrent reference: float throughout, a state stored in bf16, and vLLM's aligned checkpoints.
#pragma once

#include "impls/recurrent/recurrent.h"
#include "oracle/numeric/numeric_profile.h"
#include "properties/trace/policy.h"

namespace kvconform::variants {

struct recurrent_f32_rules : recurrent_rules {
  using scalar = float;
};
/// Inputs rounded to float on arrival, float arithmetic, a float state.
struct recurrent_f32 : basic_recurrent<recurrent_f32_rules> {
  using basic_recurrent::basic_recurrent;
  static constexpr numeric_profile profile{.storage = precision::f32, .keys = formats::f32, .working = precision::f32};
};

inline double to_bf16(double x) { return round_to(precision::bf16, x); }
struct recurrent_bf16_state_rules : recurrent_rules {
  static constexpr std::size_t chunk = 0;  // the state is rounded after every step, so token by token
  static constexpr double (*store)(double) = to_bf16;
};
/// Double arithmetic, the state rounded to bf16 after every step (as engines keep an SSM state in bf16).
struct recurrent_bf16_state : basic_recurrent<recurrent_bf16_state_rules> {
  using basic_recurrent::basic_recurrent;
  static constexpr numeric_profile profile{.keys = formats::bf16};
};

struct recurrent_vllm_rules : recurrent_rules {
  static constexpr bool all_but_last = true, append_end = true;
};
inline constexpr kvconform::policy recurrent_vllm_policies[] = {{"hit_limit", "all_but_last"},
                                                                {"checkpoint_at", "append_end"}};
/// vLLM's mamba_cache_mode=align with its hit limit: a checkpoint only where a step ends on a block boundary.
struct recurrent_vllm : basic_recurrent<recurrent_vllm_rules> {
  using basic_recurrent::basic_recurrent;
  static constexpr const auto& policies = recurrent_vllm_policies;
};

}  // namespace kvconform::variants
