// One head of a recurrent layer in arithmetic T: its convolution window and state, advanced a token at a time or a
// chunk at a time as engines' chunked kernels do (docs/numerics.md §3.9).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include <kvconform/errors.h>
#include "oracle/numeric/recurrence.h"

namespace kvconform {

/// Holds the last width - 1 raw rows (zeros before the first token) and the d_k x d_v state, both in T, optionally
/// rounded by `store` after every token (a state kept in a narrower format than it is computed in). Tokens come as
/// raw rows x = [q | k | v] with a log decay g and, for the delta rule, a write strength b; each token's output
/// o = S^T q goes to `out` (d_v values per token).
template <class T>
class recurrent_head {
 public:
  recurrent_head(recurrence_form form, std::size_t d_k, std::size_t d_v, std::size_t width, std::vector<double> conv,
                 double (*store)(double) = nullptr)
      : form_(form), dk_(d_k), dv_(d_v), w_(width), conv_(std::move(conv)), store_(store),
        window_(width ? (width - 1) * channels() : 0, T(0)), S_(d_k * d_v, T(0)) {
    if (auto why = recurrence_shape_invalid(d_k, d_v, width, conv_.size()); !why.empty())
      throw shape_error("recurrent head: " + why);
  }

  std::size_t channels() const { return 2 * dk_ + dv_; }
  const std::vector<T>& state() const { return S_; }
  const std::vector<T>& window() const { return window_; }
  /// The window's rows for a caller that moves them itself (a mutant that forgets to).
  std::vector<T>& window_rows() { return window_; }

  /// n tokens, one at a time.
  void step(const double* x, const double* g, const double* b, std::size_t n, T* out) {
    const std::vector<T> xc = convolve(x, n);
    std::vector<T> proj(dv_);
    for (std::size_t t = 0; t < n; ++t) {
      const T *q = &xc[t * channels()], *k = q + dk_, *v = k + dk_;
      const T a = exp_of(g[t]);
      if (form_ == recurrence_form::delta) {
        const T beta = T(b[t]);
        for (std::size_t c = 0; c < dv_; ++c) proj[c] = 0;
        for (std::size_t j = 0; j < dk_; ++j)
          for (std::size_t c = 0; c < dv_; ++c) proj[c] += k[j] * S_[j * dv_ + c];
        for (std::size_t j = 0; j < dk_; ++j)
          for (std::size_t c = 0; c < dv_; ++c)
            S_[j * dv_ + c] = a * (S_[j * dv_ + c] - beta * k[j] * proj[c]) + beta * k[j] * v[c];
      } else {
        for (std::size_t j = 0; j < dk_; ++j)
          for (std::size_t c = 0; c < dv_; ++c) S_[j * dv_ + c] = a * S_[j * dv_ + c] + k[j] * v[c];
      }
      if (store_)
        for (T& e : S_) e = T(store_(static_cast<double>(e)));
      read_out(q, out + t * dv_);
    }
  }

  /// n tokens in chunks of `chunk` by the algorithms engines' prefill kernels use: the decay form as Mamba-2's state
  /// space duality (decays from cumulative log sums, each output an intra-chunk sum of (q . k_s) D v_s plus the
  /// chunk's starting state), the delta rule as Gated DeltaNet's (each token's pseudo-value b_i (v_i - S_{i-1}^T k_i
  /// e^g_i) by forward substitution over the chunk's earlier keys, then the same two parts). No state rounding.
  void chunked(const double* x, const double* g, const double* b, std::size_t n, std::size_t chunk, T* out) {
    const std::vector<T> xc = convolve(x, n);
    const std::size_t ch = channels();
    for (std::size_t t0 = 0; t0 < n; t0 += chunk) {
      const std::size_t m = std::min(chunk, n - t0);
      const T* base = &xc[t0 * ch];
      std::vector<T> cum(m);  // cumulative log decay within the chunk, through token i
      for (std::size_t i = 0; i < m; ++i) cum[i] = (i ? cum[i - 1] : T(0)) + T(g[t0 + i]);
      const std::vector<T> U = pseudo_values(base, cum, b ? b + t0 : nullptr);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t c = 0; c < dv_; ++c) {
          const T* q = base + i * ch;
          T s = 0;
          for (std::size_t j = 0; j < dk_; ++j) s += q[j] * S_[j * dv_ + c];
          s *= exp_of(cum[i]);
          for (std::size_t l = 0; l <= i; ++l) s += exp_of(cum[i] - cum[l]) * dot(q, base + l * ch + dk_) * U[l * dv_ + c];
          out[(t0 + i) * dv_ + c] = s;
        }
      for (std::size_t j = 0; j < dk_; ++j)
        for (std::size_t c = 0; c < dv_; ++c) {
          T s = exp_of(cum[m - 1]) * S_[j * dv_ + c];
          for (std::size_t l = 0; l < m; ++l) s += exp_of(cum[m - 1] - cum[l]) * base[l * ch + dk_ + j] * U[l * dv_ + c];
          S_[j * dv_ + c] = s;
        }
    }
  }

 private:
  recurrence_form form_;
  std::size_t dk_, dv_, w_;
  std::vector<double> conv_;
  double (*store_)(double);
  std::vector<T> window_, S_;

  static T exp_of(T x) {
    using std::exp;
    return exp(x);
  }
  T dot(const T* a, const T* b) const {
    T s = 0;
    for (std::size_t j = 0; j < dk_; ++j) s += a[j] * b[j];
    return s;
  }
  void read_out(const T* q, T* o) const {
    for (std::size_t c = 0; c < dv_; ++c) o[c] = 0;
    for (std::size_t j = 0; j < dk_; ++j)
      for (std::size_t c = 0; c < dv_; ++c) o[c] += q[j] * S_[j * dv_ + c];
  }

  /// The n tokens' convolved channels (q and k normalised for the delta rule); the window moves past them.
  std::vector<T> convolve(const double* x, std::size_t n) {
    const std::size_t ch = channels(), held = w_ - 1;
    std::vector<T> rows(window_);  // the window, then the new tokens' raw rows
    for (std::size_t i = 0; i < n * ch; ++i) rows.push_back(T(x[i]));
    std::vector<T> xc(n * ch);
    for (std::size_t t = 0; t < n; ++t)
      for (std::size_t c = 0; c < ch; ++c) {
        T s = 0;
        for (std::size_t i = 0; i < w_; ++i) s += T(conv_[i * ch + c]) * rows[(held + t - i) * ch + c];
        xc[t * ch + c] = s;
      }
    window_.assign(rows.end() - static_cast<std::ptrdiff_t>(held * ch), rows.end());
    if (form_ == recurrence_form::delta)
      for (std::size_t t = 0; t < n; ++t)
        for (std::size_t off : {std::size_t{0}, dk_}) normalise(&xc[t * ch + off]);
    return xc;
  }
  void normalise(T* u) const {
    using std::sqrt;
    const T norm = sqrt(dot(u, u));
    if (norm > 0)
      for (std::size_t j = 0; j < dk_; ++j) u[j] /= norm;
  }

  /// The chunk's pseudo-values: v itself for the decay form; for the delta rule u_i = b_i (v_i - e^cum_i S0^T k_i -
  /// sum_{l<i} e^(cum_i - cum_l) (k_i . k_l) u_l).
  std::vector<T> pseudo_values(const T* base, const std::vector<T>& cum, const double* b) const {
    const std::size_t ch = channels(), m = cum.size();
    std::vector<T> U(m * dv_);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t c = 0; c < dv_; ++c) {
        const T *k = base + i * ch + dk_, *v = k + dk_;
        if (form_ == recurrence_form::decay) {
          U[i * dv_ + c] = v[c];
          continue;
        }
        T s = 0;
        for (std::size_t j = 0; j < dk_; ++j) s += S_[j * dv_ + c] * k[j];
        T r = v[c] - exp_of(cum[i]) * s;
        for (std::size_t l = 0; l < i; ++l) r -= exp_of(cum[i] - cum[l]) * dot(k, base + l * ch + dk_) * U[l * dv_ + c];
        U[i * dv_ + c] = T(b[i]) * r;
      }
    return U;
  }
};

}  // namespace kvconform
