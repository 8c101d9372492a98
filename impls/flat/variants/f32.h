// Valid variant: a float32 flat cache (storage and arithmetic), declared as float32 so the bound uses u = 2^-24.
#pragma once

#include <cmath>

#include "impls/flat/flat.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform::variants {

struct f32_kernel : attention_kernel {
  using score_type = float;
  using value_type = float;
  static float exp(float x) { return std::exp(x); }
  static float scale(std::size_t d_k) { return 1.0f / std::sqrt(static_cast<float>(d_k)); }
};
struct f32_rules : flat_rules {
  using scalar = float;
  using kernel = f32_kernel;
};
struct flat_f32 : basic_flat<f32_rules> {
  using basic_flat::basic_flat;
  static constexpr numeric_profile profile{.storage = precision::f32, .working = precision::f32};
};

}  // namespace kvconform::variants
