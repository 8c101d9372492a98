// Mutants flat-wide-lane-dropped and flat-bulk-count-u8 (docs/mutants.md): bugs only large shapes reach.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "impls/flat/flat.h"

namespace kvconform::mutants {

/// Decodes heads of 32 or more through a separate "vectorised" path whose score loop drops a lane.
struct flat_wide_lane_dropped : flat {
  using basic_flat::basic_flat;
};

/// k . q as the wide path computes it: 32 lanes at a time, the tail one by one. Each 32-lane block's
/// horizontal sum stops one lane short (lane 31 never enters the score).
inline double wide_dot(const double* k, const double* q, std::size_t d) {
  double total = 0;
  std::size_t j = 0;
  for (; j + 32 <= d; j += 32) {
    double lanes[32];
    for (std::size_t l = 0; l < 32; ++l) lanes[l] = k[j + l] * q[j + l];
    for (std::size_t l = 0; l < 31; ++l) total += lanes[l];
  }
  for (; j < d; ++j) total += k[j] * q[j];
  return total;
}

/// Heads below 32 take the reference kernel; wider ones a two-pass softmax over wide_dot scores.
inline decode_result decode_step(array_view q, const flat_wide_lane_dropped& c) {
  return decode_with(q, c, [](std::size_t n, std::size_t dk, std::size_t dv, const double* qd, auto key, auto value) {
    if (dk < 32) return attend(n, dk, dv, qd, key, value);
    std::vector<double> s(n);
    double m = -std::numeric_limits<double>::infinity(), l = 0;
    for (std::size_t i = 0; i < n; ++i) m = std::max(m, s[i] = wide_dot(key(i), qd, dk) / std::sqrt(double(dk)));
    for (double& x : s) l += (x = std::exp(x - m));
    decode_result r{Eigen::VectorXd::Zero(static_cast<Eigen::Index>(dv)),
                    Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n))};
    for (std::size_t i = 0; i < n; ++i) {
      r.weights[static_cast<Eigen::Index>(i)] = s[i] / l;
      for (std::size_t c = 0; c < dv; ++c) r.output[static_cast<Eigen::Index>(c)] += s[i] / l * value(i)[c];
    }
    return r;
  });
}

/// Copies a bulk append through a loop whose row count is a uint8_t: an append of n >= 256 rows
/// writes only n mod 256 of them, while the length still grows by n (the rest stay unwritten, NaN).
struct flat_bulk_count_u8 : flat {
  using basic_flat::basic_flat;
  void append(array_view k, array_view v) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v());
    if (len_ + steps > max_len()) throw capacity_error("append: cache full");
    const auto rows = static_cast<std::uint8_t>(steps);
    for (std::uint8_t i = 0; i < rows; ++i) write_row(len_ + i, k.data + i * d_k(), v.data + i * d_v());
    len_ += steps;
  }
};

}  // namespace kvconform::mutants
