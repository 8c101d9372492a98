// Two-pass, max-subtracted softmax attention over rows reached through accessors (any layout).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace kvconform {

/// What a decode returns: output[d_v] and one weight per attended row, in logical order.
struct decode_result {
  Eigen::VectorXd output;
  Eigen::VectorXd weights;
};

/// The arithmetic of the reference decode. Each member is one decision a kernel makes; the
/// mutants in impls/mutants change exactly one of them, and a float32 cache changes the types.
struct attention_kernel {
  using score_type = double;  ///< accumulates k . q
  using value_type = double;  ///< accumulates the weights, their sum and sum_i w_i v_i
  /// Subtracting the max keeps exp in range for scores beyond +-1000.
  static constexpr bool subtract_max = true;
  /// How many leading rows the max scans (all of them).
  static constexpr std::size_t max_rows = SIZE_MAX;
  static value_type exp(value_type x) { return std::exp(x); }
  static score_type scale(std::size_t d_k) { return score_type(1) / std::sqrt(score_type(d_k)); }
};

/// s_i = k_i . q / sqrt(d_k), w = softmax(s), output = sum_i w_i v_i. `key(i)` and `value(i)`
/// return pointers to row i, so contiguous, ring and block layouts share this one routine.
template <class Kernel = attention_kernel, class KeyRow, class ValueRow>
decode_result attend(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, KeyRow key, ValueRow value) {
  using S = typename Kernel::score_type;
  using V = typename Kernel::value_type;
  std::vector<V> w(n);
  const S scale = Kernel::scale(d_k);
  V m = -std::numeric_limits<V>::infinity();
  for (std::size_t i = 0; i < n; ++i) {
    const auto* k = key(i);
    S s = 0;
    for (std::size_t j = 0; j < d_k; ++j) s += S(k[j]) * S(q[j]);
    w[i] = V(s * scale);
    if (i < Kernel::max_rows) m = std::max(m, w[i]);
  }
  V l = 0;
  for (V& x : w) l += (x = Kernel::exp(Kernel::subtract_max ? x - m : x));
  std::vector<V> o(d_v, V(0));
  for (std::size_t i = 0; i < n; ++i) {
    w[i] /= l;
    const auto* v = value(i);
    for (std::size_t c = 0; c < d_v; ++c) o[c] += w[i] * V(v[c]);
  }
  decode_result r{Eigen::VectorXd(static_cast<Eigen::Index>(d_v)), Eigen::VectorXd(static_cast<Eigen::Index>(n))};
  for (std::size_t c = 0; c < d_v; ++c) r.output[static_cast<Eigen::Index>(c)] = double(o[c]);
  for (std::size_t i = 0; i < n; ++i) r.weights[static_cast<Eigen::Index>(i)] = double(w[i]);
  return r;
}

}  // namespace kvconform
