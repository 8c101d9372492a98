// Two-pass, max-subtracted softmax attention over rows reached through accessors (any layout).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace kvconform {

/// What a decode returns: output[d_v] and one weight per attended row, in logical order.
struct decode_result {
  Eigen::VectorXd output;
  Eigen::VectorXd weights;
};

/// s_i = k_i . q / sqrt(d_k), w = softmax(s), output = sum_i w_i v_i, over the rows i with
/// `live(i)` (a mask: the others take weight exactly 0 and are never read, so padding may hold
/// anything). No live row gives zero output and zero weights rather than 0/0. `key(i)` and
/// `value(i)` return pointers to row i, so contiguous, ring, block and batched layouts share
/// this one routine. Subtracting the max keeps exp in range for scores beyond +-1000.
template <class KeyRow, class ValueRow, class Live>
decode_result attend(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q,
                     KeyRow key, ValueRow value, Live live) {
  decode_result r{Eigen::VectorXd::Zero(static_cast<Eigen::Index>(d_v)),
                  Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n))};
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_k));
  double m = -std::numeric_limits<double>::infinity();
  bool any_live = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!live(i)) continue;
    any_live = true;
    const double* k = key(i);
    double s = 0;
    for (std::size_t j = 0; j < d_k; ++j) s += k[j] * q[j];
    r.weights[static_cast<Eigen::Index>(i)] = s * scale;
    m = std::max(m, r.weights[static_cast<Eigen::Index>(i)]);
  }
  if (!any_live) return r;
  double l = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!live(i)) continue;
    double& w = r.weights[static_cast<Eigen::Index>(i)];
    w = std::exp(w - m);
    l += w;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!live(i)) continue;
    double& w = r.weights[static_cast<Eigen::Index>(i)];
    w /= l;
    const double* v = value(i);
    for (std::size_t c = 0; c < d_v; ++c) r.output[static_cast<Eigen::Index>(c)] += w * v[c];
  }
  return r;
}

/// Every row attends (the single-sequence caches have no mask).
template <class KeyRow, class ValueRow>
decode_result attend(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q,
                     KeyRow key, ValueRow value) {
  return attend(n, d_k, d_v, q, key, value, [](std::size_t) { return true; });
}

}  // namespace kvconform
