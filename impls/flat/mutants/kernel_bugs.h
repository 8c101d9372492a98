// Mutants of the decode arithmetic (docs/mutants.md, docs/numerics.md §5.2), one kernel decision each.
#pragma once

#include <cmath>

#include "impls/flat/flat.h"

namespace kvconform::mutants {

/// A flat cache whose decode uses `Kernel`.
template <class Kernel>
struct kernel_rules : flat_rules {
  using kernel = Kernel;
};
template <class Kernel>
using flat_with_kernel = basic_flat<kernel_rules<Kernel>>;

/// Naive softmax without the max: exp overflows at scores ~ +1000 and gives 0/0 at ~ -1000.
struct naive_softmax_kernel : attention_kernel {
  static constexpr bool subtract_max = false;
};
/// The 1/sqrt(d_k) scale forgotten.
struct no_scale_kernel : attention_kernel {
  static double scale(std::size_t) { return 1.0; }
};
/// Scores accumulated in float inside a double cache.
struct float_scores_kernel : attention_kernel {
  using score_type = float;
  static float scale(std::size_t d_k) { return 1.0f / std::sqrt(static_cast<float>(d_k)); }
};
/// The weighted sum of values accumulated in float.
struct float_values_kernel : attention_kernel {
  using value_type = float;
  static float exp(float x) { return std::exp(x); }
};
/// expf where exp was meant.
struct expf_kernel : attention_kernel {
  static double exp(double x) { return std::exp(static_cast<float>(x)); }
};
/// The max taken from row 0 only: a later score > s_0 + 709 overflows.
struct max_from_row0_kernel : attention_kernel {
  static constexpr std::size_t max_rows = 1;
};

/// The running max over the first 32 rows only, as a kernel that tiles the keys by 32 and forgets
/// the later tiles for the max: a later score more than ~709.78 above them overflows.
struct max_first_32_rows_kernel : attention_kernel {
  static constexpr std::size_t max_rows = 32;
};
/// exp(s - m) below 1e-300 taken as 0, so those weights leave the normaliser and the output: a
/// "skip negligible terms" shortcut whose threshold lies inside double's normal range.
struct drop_tiny_weights_kernel : attention_kernel {
  static double exp(double x) {
    const double p = std::exp(x);
    return p < 1e-300 ? 0 : p;
  }
};

using flat_naive_softmax = flat_with_kernel<naive_softmax_kernel>;
using flat_no_scale = flat_with_kernel<no_scale_kernel>;
using flat_float_scores = flat_with_kernel<float_scores_kernel>;
using flat_float_values = flat_with_kernel<float_values_kernel>;
using flat_expf = flat_with_kernel<expf_kernel>;
using flat_max_from_row0 = flat_with_kernel<max_from_row0_kernel>;
using flat_max_first_32_rows = flat_with_kernel<max_first_32_rows_kernel>;
using flat_drop_tiny_weights = flat_with_kernel<drop_tiny_weights_kernel>;

}  // namespace kvconform::mutants
