// The attention formula evaluated in a wide number type T (float128 by default, MPFR as referee).
#pragma once

#include <cstddef>
#include <vector>

#include "oracle/numeric/attention_problem.h"

namespace kvconform {

/// Oracle quantities in T: scores s (masked keys keep 0 and are skipped), their max m over
/// live keys, weights w and output o. `any_live` is false when every key is masked; then
/// o and w are exactly zero, as the beam contract requires.
template <class T>
struct oracle_result {
  std::vector<T> s, w, o;
  T m = 0;
  bool any_live = false;
};

/// s_i = k_i . q / sqrt(d_k) (capped as c tanh(s_i / c) under a soft cap), w = softmax(s) with a learned sink's
/// e^(sink - m) in the normaliser (docs/numerics.md §7), o = w V, all in T. Every product of two doubles
/// is exact in T of >= 106 bits, so the only errors are T's own roundings. The max is still
/// subtracted so exp stays in range for T.
template <class T>
oracle_result<T> attention_oracle(const attention_problem& p) {
  using std::exp;
  using std::sqrt;
  using std::tanh;
  oracle_result<T> r;
  r.s.assign(p.n, T(0));
  r.w.assign(p.n, T(0));
  r.o.assign(p.d_v, T(0));
  const T scale = T(1) / sqrt(T(static_cast<double>(p.d_k)));
  for (std::size_t i = 0; i < p.n; ++i) {
    if (!p.is_live(i)) continue;
    T dot = 0;
    for (std::size_t j = 0; j < p.d_k; ++j) dot += T(p.keys[i * p.d_k + j]) * T(p.q[j]);
    r.s[i] = dot * scale;
    if (p.softcap > 0) r.s[i] = T(p.softcap) * tanh(r.s[i] / T(p.softcap));
    if (!r.any_live || r.s[i] > r.m) r.m = r.s[i];
    r.any_live = true;
  }
  if (!r.any_live) return r;
  if (p.has_sink && T(p.sink) > r.m) r.m = T(p.sink);
  T l = p.has_sink ? exp(T(p.sink) - r.m) : T(0);
  for (std::size_t i = 0; i < p.n; ++i)
    if (p.is_live(i)) l += (r.w[i] = exp(r.s[i] - r.m));
  for (std::size_t i = 0; i < p.n; ++i) {
    if (!p.is_live(i)) continue;
    r.w[i] /= l;
    for (std::size_t c = 0; c < p.d_v; ++c) r.o[c] += r.w[i] * T(p.values[i * p.d_v + c]);
  }
  return r;
}

}  // namespace kvconform
