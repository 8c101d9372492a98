// Correct alternative decode algorithms (online, exp2-folded, pairwise, reversed, split-K) for the valid variants.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

#include "impls/common/attention.h"

namespace kvconform::variants {

/// Scores k_i . q / sqrt(d_k) in row order.
template <class KeyRow>
std::vector<double> scores(std::size_t n, std::size_t d_k, const double* q, KeyRow key) {
  std::vector<double> s(n);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_k));
  for (std::size_t i = 0; i < n; ++i) {
    double dot = 0;
    for (std::size_t j = 0; j < d_k; ++j) dot += key(i)[j] * q[j];
    s[i] = dot * scale;
  }
  return s;
}

/// Packs weights and output into a decode_result.
inline decode_result result(const std::vector<double>& w, const std::vector<double>& o) {
  decode_result r{Eigen::Map<const Eigen::VectorXd>(o.data(), static_cast<Eigen::Index>(o.size())),
                  Eigen::Map<const Eigen::VectorXd>(w.data(), static_cast<Eigen::Index>(w.size()))};
  return r;
}

/// Online (streaming) softmax over blocks of `block` keys: the running max, sum and output are
/// rescaled by exp(m_old - m_new) whenever a block raises the max (Milakov & Gimelshein).
template <std::size_t block, class KeyRow, class ValueRow>
decode_result attend_online(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, KeyRow key,
                            ValueRow value) {
  const std::vector<double> s = scores(n, d_k, q, key);
  double m = -std::numeric_limits<double>::infinity(), l = 0;
  std::vector<double> o(d_v, 0.0);
  for (std::size_t b = 0; b < n; b += block) {
    const std::size_t e = std::min(n, b + block);
    const double m_new = std::max(
        m, *std::max_element(s.begin() + static_cast<std::ptrdiff_t>(b), s.begin() + static_cast<std::ptrdiff_t>(e)));
    const double rescale = std::exp(m - m_new);
    l *= rescale;
    for (double& x : o) x *= rescale;
    for (std::size_t i = b; i < e; ++i) {
      const double p = std::exp(s[i] - m_new);
      l += p;
      for (std::size_t c = 0; c < d_v; ++c) o[c] += p * value(i)[c];
    }
    m = m_new;
  }
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = std::exp(s[i] - m) / l;
  for (double& x : o) x /= l;
  return result(w, o);
}

/// FlashAttention style: exp2 of the raw dot product with scale * log2(e) folded into an FMA.
template <class KeyRow, class ValueRow>
decode_result attend_exp2_fma(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, KeyRow key,
                              ValueRow value) {
  std::vector<double> dot(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d_k; ++j) dot[i] = std::fma(key(i)[j], q[j], dot[i]);
  const double c = 1.4426950408889634 / std::sqrt(static_cast<double>(d_k));  // log2(e) / sqrt(d_k)
  const double m = *std::max_element(dot.begin(), dot.end());
  std::vector<double> w(n), o(d_v, 0.0);
  double l = 0;
  for (std::size_t i = 0; i < n; ++i) l += (w[i] = std::exp2(std::fma(dot[i], c, -m * c)));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c2 = 0; c2 < d_v; ++c2) o[c2] += w[i] * value(i)[c2];
  for (double& x : o) x /= l;
  for (double& x : w) x /= l;
  return result(w, o);
}

/// Pairwise (recursive halving) sum of f(i) for i in [b, e).
template <class F>
double pairwise(std::size_t b, std::size_t e, const F& f) {
  if (e - b <= 2) return b == e ? 0.0 : (e - b == 1 ? f(b) : f(b) + f(b + 1));
  const std::size_t mid = b + (e - b) / 2;
  return pairwise(b, mid, f) + pairwise(mid, e, f);
}

/// Two-pass softmax with every sum (dot products, normaliser, output) taken pairwise.
template <class KeyRow, class ValueRow>
decode_result attend_pairwise(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, KeyRow key,
                              ValueRow value) {
  std::vector<double> s(n), w(n), o(d_v);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_k));
  for (std::size_t i = 0; i < n; ++i) s[i] = pairwise(0, d_k, [&](std::size_t j) { return key(i)[j] * q[j]; }) * scale;
  const double m = *std::max_element(s.begin(), s.end());
  for (std::size_t i = 0; i < n; ++i) w[i] = std::exp(s[i] - m);
  const double l = pairwise(0, n, [&](std::size_t i) { return w[i]; });
  for (double& x : w) x /= l;
  for (std::size_t c = 0; c < d_v; ++c) o[c] = pairwise(0, n, [&](std::size_t i) { return w[i] * value(i)[c]; });
  return result(w, o);
}

/// The reference algorithm with every loop run backwards (last key and last component first).
template <class KeyRow, class ValueRow>
decode_result attend_reversed(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, KeyRow key,
                              ValueRow value) {
  std::vector<double> s(n), o(d_v, 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_k));
  for (std::size_t i = n; i-- > 0;) {
    double dot = 0;
    for (std::size_t j = d_k; j-- > 0;) dot += key(i)[j] * q[j];
    s[i] = dot * scale;
  }
  const double m = *std::max_element(s.begin(), s.end());
  double l = 0;
  for (std::size_t i = n; i-- > 0;) l += (s[i] = std::exp(s[i] - m));
  for (std::size_t i = n; i-- > 0;) {
    s[i] /= l;
    for (std::size_t c = 0; c < d_v; ++c) o[c] += s[i] * value(i)[c];
  }
  return result(s, o);
}

/// Split-K (flash-decoding): `splits` contiguous chunks each reduce to (max, sum, output), then
/// the partials combine with exp(m_s - M) factors.
template <std::size_t splits, class KeyRow, class ValueRow>
decode_result attend_split_k(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, KeyRow key,
                             ValueRow value) {
  const std::vector<double> s = scores(n, d_k, q, key);
  const std::size_t chunk = (n + splits - 1) / splits;
  std::vector<double> m_s, l_s;
  std::vector<std::vector<double>> o_s;
  for (std::size_t b = 0; b < n; b += chunk) {
    const std::size_t e = std::min(n, b + chunk);
    const double m =
        *std::max_element(s.begin() + static_cast<std::ptrdiff_t>(b), s.begin() + static_cast<std::ptrdiff_t>(e));
    double l = 0;
    std::vector<double> o(d_v, 0.0);
    for (std::size_t i = b; i < e; ++i) {
      const double p = std::exp(s[i] - m);
      l += p;
      for (std::size_t c = 0; c < d_v; ++c) o[c] += p * value(i)[c];
    }
    m_s.push_back(m), l_s.push_back(l), o_s.push_back(std::move(o));
  }
  const double M = *std::max_element(m_s.begin(), m_s.end());
  double l = 0;
  std::vector<double> o(d_v, 0.0);
  for (std::size_t p = 0; p < m_s.size(); ++p) {
    const double f = std::exp(m_s[p] - M);
    l += l_s[p] * f;
    for (std::size_t c = 0; c < d_v; ++c) o[c] += o_s[p][c] * f;
  }
  for (double& x : o) x /= l;
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = std::exp(s[i] - M) / l;
  return result(w, o);
}

}  // namespace kvconform::variants
