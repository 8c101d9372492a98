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
  /// Masked rows are left out entirely (weight exactly 0), not given a very low score.
  static constexpr bool exclude_masked = true;
  static constexpr double masked_score = 0;  ///< the score a masked row gets when not excluded
  static value_type exp(value_type x) { return std::exp(x); }
  static score_type scale(std::size_t d_k) { return score_type(1) / std::sqrt(score_type(d_k)); }
};

/// s_i = k_i . q / sqrt(d_k), w = softmax(s), output = sum_i w_i v_i, over the rows i with
/// `live(i)` (a mask: the others take weight exactly 0 and are never read, so padding may hold
/// anything). No live row gives zero output and zero weights rather than 0/0. `key(i)` and
/// `value(i)` return pointers to row i, so contiguous, ring, block and batched layouts share
/// this one routine.
template <class Kernel = attention_kernel, class KeyRow, class ValueRow, class Live>
decode_result attend(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, KeyRow key, ValueRow value,
                     Live live) {
  using S = typename Kernel::score_type;
  using V = typename Kernel::value_type;
  std::vector<V> w(n, V(0));
  std::vector<char> used(n);
  const S scale = Kernel::scale(d_k);
  V m = -std::numeric_limits<V>::infinity();
  bool any = false, infinite_key = false;
  for (std::size_t i = 0; i < n; ++i) {
    used[i] = live(i) || !Kernel::exclude_masked;
    if (!used[i]) continue;
    any = true;
    if (live(i)) {
      const auto* k = key(i);
      S s = 0;
      for (std::size_t j = 0; j < d_k; ++j) s += S(k[j]) * S(q[j]);
      w[i] = V(s * scale);
      // A key of infinite size scores -inf where q points away: the edge rule of docs/numerics.md
      // §4.3 wants NaN then, not the limit in which the key takes no weight.
      infinite_key = infinite_key || (std::isinf(w[i]) && w[i] < 0);
    } else {
      w[i] = V(Kernel::masked_score);
    }
    if (i < Kernel::max_rows) m = std::max(m, w[i]);
  }
  decode_result r{Eigen::VectorXd::Zero(static_cast<Eigen::Index>(d_v)),
                  Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n))};
  if (!any) return r;
  if (infinite_key) m = std::numeric_limits<V>::quiet_NaN();
  V l = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (used[i]) l += (w[i] = Kernel::exp(Kernel::subtract_max ? w[i] - m : w[i]));
  std::vector<V> o(d_v, V(0));
  for (std::size_t i = 0; i < n; ++i) {
    if (!used[i]) continue;
    w[i] /= l;
    const auto* v = value(i);
    for (std::size_t c = 0; c < d_v; ++c) o[c] += w[i] * V(v[c]);
  }
  for (std::size_t c = 0; c < d_v; ++c) r.output[static_cast<Eigen::Index>(c)] = double(o[c]);
  for (std::size_t i = 0; i < n; ++i) r.weights[static_cast<Eigen::Index>(i)] = double(w[i]);
  return r;
}

/// Every row attends (the single-sequence caches have no mask).
template <class Kernel = attention_kernel, class KeyRow, class ValueRow>
decode_result attend(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, KeyRow key, ValueRow value) {
  return attend<Kernel>(n, d_k, d_v, q, key, value, [](std::size_t) { return true; });
}

}  // namespace kvconform
