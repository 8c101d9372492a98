// Valid variants in storage formats (docs/mutants.md): other correct routes to the same stored values and results.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "impls/flat/flat.h"

namespace kvconform::variants {

/// q8_0 with its scales stored in f32, and so declared.
inline constexpr storage_format q8_f32_scales{
    .groups = true, .bits = 8, .group = 32, .scale_format = element_format::f32};
using flat_q8_f32_scales = flat_stored<q8_f32_scales>;

/// int4 codes unpacked through a 256-entry table of (low, high) nibbles instead of shifts and masks.
struct lut_rules : storage_rules {
  static unsigned unpack(const std::vector<std::uint8_t>& bytes, std::size_t i) {
    static const auto table = [] {
      std::array<std::array<std::uint8_t, 2>, 256> t{};
      for (unsigned b = 0; b < 256; ++b) t[b] = {static_cast<std::uint8_t>(b % 16), static_cast<std::uint8_t>(b / 16)};
      return t;
    }();
    return table[bytes[i / 2]][i % 2];
  }
};
using flat_q4_lut = flat_stored<formats::q4_1, formats::q4_1, lut_rules>;

/// e4m3 by search: the nearest of the 126 finite positive values in a sorted table, ties to the
/// even code, NaN beyond 464; no bit manipulation of the input.
struct e4m3_table_rules : storage_rules {
  static double store(const storage_format& f, double x) {
    if (f.element != element_format::e4m3) return storage_rules::store(f, x);
    static const auto table = [] {
      std::vector<double> t;  // codes 0 .. 126 in order: 0, the subnormals k 2^-9, then (8 + m) 2^(e - 10)
      for (int c = 0; c < 127; ++c) t.push_back(c < 8 ? c * 0x1p-9 : std::ldexp(8 + c % 8, c / 8 - 10));
      return t;
    }();
    if (std::isnan(x) || std::fabs(x) > 464) return std::copysign(std::nan(""), x);
    const double a = std::fabs(x);
    const auto hi = std::lower_bound(table.begin(), table.end(), a);
    if (hi == table.begin()) return std::copysign(0.0, x);
    const auto lo = hi - 1;
    double pick = *lo;
    if (hi != table.end() && (*hi - a < a - *lo || (*hi - a == a - *lo && (hi - table.begin()) % 2 == 0))) pick = *hi;
    if (!f.subnormals && pick < 0x1p-6) pick = 0;
    return std::copysign(pick, x);
  }
};
using flat_e4m3_table = flat_stored<formats::e4m3, formats::e4m3, e4m3_table_rules>;

/// q8_0 whose decode never dequantizes a row: each score is sum over groups of scale times the
/// integer dot product of codes and q, and each output sums w_i times code times scale.
struct flat_q8_fused : flat_stored<formats::q8_0> {
  using stored::stored;
};
inline decode_result decode_step(array_view q, const flat_q8_fused& c) {
  if (q.rank != 1 || q.dims[0] != c.d_k()) throw shape_error("decode_step: q must be 1-D of width d_k");
  if (c.size() == 0) throw empty_error("decode_step: empty cache");
  const auto &ks = c.key_storage(), &vs = c.value_storage();
  const std::size_t n = c.size(), dk = c.d_k(), dv = c.d_v();
  std::vector<double> s(n, 0.0), o(dv, 0.0);
  double m = -INFINITY, l = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t g = 0, j = 0; g < ks.ngroups(); ++g) {
      double dot = 0;
      for (; j < dk && ks.group_of(j) == g; ++j) dot += static_cast<double>(ks.code(i, j)) * q.data[j];
      s[i] += ks.token_scale(i, g) * dot;
    }
    s[i] /= std::sqrt(static_cast<double>(dk));
    m = std::max(m, s[i]);
  }
  decode_result r{Eigen::VectorXd::Zero(static_cast<Eigen::Index>(dv)),
                  Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n))};
  for (std::size_t i = 0; i < n; ++i) l += (s[i] = std::exp(s[i] - m));
  for (std::size_t i = 0; i < n; ++i) {
    r.weights[static_cast<Eigen::Index>(i)] = s[i] / l;
    for (std::size_t j = 0; j < dv; ++j)
      o[j] += s[i] / l * (static_cast<double>(vs.code(i, j)) * vs.token_scale(i, vs.group_of(j)));
  }
  for (std::size_t j = 0; j < dv; ++j) r.output[static_cast<Eigen::Index>(j)] = o[j];
  return r;
}

}  // namespace kvconform::variants
