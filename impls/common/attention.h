// Two-pass, max-subtracted softmax attention over rows reached through accessors (any layout).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include "oracle/numeric/attention_semantics.h"

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
  /// Learned sinks and soft caps (docs/numerics.md §7): a sink's logit joins the normaliser, not key 0's score; the
  /// cap bends the scores, before the softmax.
  static constexpr bool sink_as_key0_bias = false;
  static constexpr bool cap_after_softmax = false;
  static value_type exp(value_type x) { return std::exp(x); }
  static score_type scale(std::size_t d_k) { return score_type(1) / std::sqrt(score_type(d_k)); }
};

/// k . q in S. In double, eight partial sums (lane j mod 8, combined pairwise) keep the loop at the
/// adder's throughput rather than its latency; the order is fixed here, whatever the compiler
/// vectorises, and any order is within the bound (docs/numerics.md §3.2). Float scores or storage
/// (a kernel mutant, a float32 cache) sum in order.
template <class S, class K>
S dot_product(const K* k, const double* q, std::size_t d) {
  if constexpr (std::is_same_v<S, double> && std::is_same_v<K, double>) {
    double acc[8] = {};
    std::size_t j = 0;
    for (; j + 8 <= d; j += 8)
      for (std::size_t l = 0; l < 8; ++l) acc[l] += k[j + l] * q[j + l];
    for (std::size_t l = 0; j < d; ++j, ++l) acc[l] += k[j] * q[j];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  } else {
    S s = 0;
    for (std::size_t j = 0; j < d; ++j) s += S(k[j]) * S(q[j]);
    return s;
  }
}

/// out_c += w v_c for c < d; in double through Eigen's vectorised loop (each element's arithmetic
/// is the same one multiply and one add).
template <class V, class T>
void accumulate_row(V* out, V w, const T* v, std::size_t d) {
  if constexpr (std::is_same_v<V, double> && std::is_same_v<T, double>) {
    const auto n = static_cast<Eigen::Index>(d);
    Eigen::Map<Eigen::VectorXd>(out, n).noalias() += w * Eigen::Map<const Eigen::VectorXd>(v, n);
  } else {
    for (std::size_t c = 0; c < d; ++c) out[c] += w * V(v[c]);
  }
}

/// What a declared attention adds to one decode (docs/numerics.md §7): the soft cap c (0: none) and the learned
/// sink's logit of the decode's head.
struct score_terms {
  double softcap = 0;
  bool has_sink = false;
  double sink = 0;
};

/// The terms `a` declares for head `head` of a call over `heads` heads: its soft cap and, with learned sinks, the
/// head's logit in `sinks` (1-D of `heads`, else shape_error); without learned sinks `sinks` is ignored.
inline score_terms declared_terms(const attention_semantics& a, array_view sinks, std::size_t heads = 1,
                                  std::size_t head = 0) {
  const bool learned = a.sinks == sink_kind::learned;
  if (learned && (sinks.rank != 1 || sinks.dims[0] != heads)) throw shape_error("sinks: one logit per head attended");
  return {a.softcap, learned, learned ? sinks.data[head] : 0};
}

/// s_i = k_i . q / sqrt(d_k) (capped, with a sink, as `t` says), w = softmax(s), output = sum_i w_i v_i, over the rows
/// i with `live(i)` (a mask: the others take weight exactly 0 and are never read, so padding may hold anything). No
/// live row gives zero output and zero weights rather than 0/0. `key(i)` and `value(i)` return pointers to row i, so
/// contiguous, ring, block and batched layouts share this one routine.
template <class Kernel = attention_kernel, class KeyRow, class ValueRow, class Live>
decode_result attend(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, KeyRow key, ValueRow value,
                     Live live, const score_terms& t = {}) {
  using S = typename Kernel::score_type;
  using V = typename Kernel::value_type;
  std::vector<V> w(n, V(0));
  std::vector<char> used(n);
  const S scale = Kernel::scale(d_k);
  V m = -std::numeric_limits<V>::infinity();
  bool any = false, any_bias = false;
  for (std::size_t i = 0; i < n; ++i) {
    used[i] = live(i) || !Kernel::exclude_masked;
    if (!used[i]) continue;
    any = true;
    // Plain IEEE arithmetic over stored infinities: a key scoring -inf takes weight 0, a NaN or
    // +inf score makes every output NaN (docs/numerics.md §4.5).
    w[i] = live(i) ? V(dot_product<S>(key(i), q, d_k) * scale) : V(Kernel::masked_score);
    if (live(i) && t.softcap > 0 && !Kernel::cap_after_softmax) w[i] = V(t.softcap) * std::tanh(w[i] / V(t.softcap));
    if (live(i) && t.has_sink && Kernel::sink_as_key0_bias && !any_bias) w[i] += V(t.sink), any_bias = true;
    if (i < Kernel::max_rows) m = std::max(m, w[i]);
  }
  const bool sink = t.has_sink && !Kernel::sink_as_key0_bias;
  decode_result r{Eigen::VectorXd::Zero(static_cast<Eigen::Index>(d_v)),
                  Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n))};
  if (!any) return r;
  if (sink) m = std::max(m, V(t.sink));
  V l = sink ? Kernel::exp(Kernel::subtract_max ? V(t.sink) - m : V(t.sink)) : V(0);
  for (std::size_t i = 0; i < n; ++i)
    if (used[i]) l += (w[i] = Kernel::exp(Kernel::subtract_max ? w[i] - m : w[i]));
  std::vector<V> o(d_v, V(0));
  for (std::size_t i = 0; i < n; ++i) {
    if (!used[i]) continue;
    w[i] /= l;
    if (Kernel::cap_after_softmax && t.softcap > 0) w[i] = V(t.softcap) * std::tanh(w[i] / V(t.softcap));
    accumulate_row<V>(o.data(), w[i], value(i), d_v);
  }
  for (std::size_t c = 0; c < d_v; ++c) r.output[static_cast<Eigen::Index>(c)] = double(o[c]);
  for (std::size_t i = 0; i < n; ++i) r.weights[static_cast<Eigen::Index>(i)] = double(w[i]);
  return r;
}

/// The m causal attentions of a prefill over n rows, rows [0, n) in order: query i (q + i d_k) attends the rows j
/// with sees(i, j). Output (m, d_v) and weights (m, n) row-major, as one decode_result (docs/design.md §2.3).
template <class Kernel = attention_kernel, class KeyRow, class ValueRow, class Sees>
decode_result attend_causal(std::size_t m, std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, KeyRow key,
                            ValueRow value, Sees sees, const score_terms& t = {}) {
  decode_result r{Eigen::VectorXd::Zero(static_cast<Eigen::Index>(m * d_v)),
                  Eigen::VectorXd::Zero(static_cast<Eigen::Index>(m * n))};
  for (std::size_t i = 0; i < m; ++i) {
    const decode_result one = attend<Kernel>(
        n, d_k, d_v, q + i * d_k, key, value, [&](std::size_t j) { return sees(i, j); }, t);
    r.output.segment(static_cast<Eigen::Index>(i * d_v), static_cast<Eigen::Index>(d_v)) = one.output;
    r.weights.segment(static_cast<Eigen::Index>(i * n), static_cast<Eigen::Index>(n)) = one.weights;
  }
  return r;
}

/// Every row attends (the single-sequence caches have no mask).
template <class Kernel = attention_kernel, class KeyRow, class ValueRow>
decode_result attend(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, KeyRow key, ValueRow value) {
  return attend<Kernel>(n, d_k, d_v, q, key, value, [](std::size_t) { return true; });
}

}  // namespace kvconform
