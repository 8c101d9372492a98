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

/// s_i = k_i . q / sqrt(d_k), w = softmax(s), output = sum_i w_i v_i. `key(i)` and `value(i)`
/// return pointers to row i, so contiguous, ring and block layouts share this one routine.
/// Subtracting the max keeps exp in range for scores beyond +-1000.
template <class KeyRow, class ValueRow>
decode_result attend(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q,
                     KeyRow key, ValueRow value) {
  decode_result r{Eigen::VectorXd::Zero(static_cast<Eigen::Index>(d_v)),
                  Eigen::VectorXd(static_cast<Eigen::Index>(n))};
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_k));
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) {
    const double* k = key(i);
    double s = 0;
    for (std::size_t j = 0; j < d_k; ++j) s += k[j] * q[j];
    r.weights[static_cast<Eigen::Index>(i)] = s * scale;
    m = std::max(m, r.weights[static_cast<Eigen::Index>(i)]);
  }
  double l = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double& w = r.weights[static_cast<Eigen::Index>(i)];
    w = std::exp(w - m);
    l += w;
  }
  for (std::size_t i = 0; i < n; ++i) {
    double& w = r.weights[static_cast<Eigen::Index>(i)];
    w /= l;
    const double* v = value(i);
    for (std::size_t c = 0; c < d_v; ++c) r.output[static_cast<Eigen::Index>(c)] += w * v[c];
  }
  return r;
}

}  // namespace kvconform
