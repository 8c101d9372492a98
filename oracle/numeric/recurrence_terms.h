// The running terms of the recurrence's bound, advanced token by token beside the oracle (docs/numerics.md §3.9).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "oracle/numeric/bound.h"
#include "oracle/numeric/double_double.h"

namespace kvconform {
/// What the bound charges (docs/numerics.md §3.9): one rounding of the working precision, of the state stored
/// between tokens (0: kept in the working precision), of the stored output, the underflow granularity, and F.
struct recurrence_precision {
  double u = 0x1p-53;
  double u_state = 0;
  double u_out = 0;
  double mu = 0x1p-1022;
  double F = bound_safety_factor;
};

namespace recurrence_terms {
using dd::ddouble;
inline constexpr double inf = std::numeric_limits<double>::infinity();

inline double norm2(const double* v, std::size_t n) {
  double s = 0;
  for (std::size_t j = 0; j < n; ++j) s += v[j] * v[j];
  return std::sqrt(s);
}

/// The decay form's bound: per state entry, the sums over earlier tokens s of D_st P_s (M), of (t - s + 1) D_st P_s (A)
/// and of |ln D_st| D_st P_s (L), where D_st is the decay from s to t and P_s = |k_s| |v_s| in convolution magnitudes;
/// R carries the state's storage roundings and G the log decay since the first token.
struct decay_bound {
  std::vector<double> M, A, L, R;
  double G = 0, max_p = 0;
  explicit decay_bound(std::size_t n) : M(n), A(n), L(n), R(n) {}

  void step(double a, double gam, const double* kmag, const double* vmag, std::size_t d_k, std::size_t d_v,
            double u_state) {
    // In locals: the arrays' stores might alias the members, so a member max would be stored and reloaded per entry.
    double *m = M.data(), *l = L.data(), *ac = A.data(), *r = R.data(), mp = max_p;
    for (std::size_t j = 0; j < d_k; ++j)
      for (std::size_t c = 0; c < d_v; ++c) {
        const std::size_t e = j * d_v + c;
        const double P = kmag[j] * vmag[c];
        l[e] = a * (l[e] + gam * m[e]);
        ac[e] = a * (ac[e] + m[e]) + P;
        m[e] = a * m[e] + P;
        r[e] = a * r[e] + u_state * m[e];
        mp = std::max(mp, P);
      }
    max_p = mp;
    G += gam;
  }
  /// Roundings along the longest path of any of the first t1 tokens' terms: the state's, the decays' (a product of
  /// exps, or one exp of a difference of cumulative sums since any earlier token), any order of a sum over t1 terms,
  /// and `extra` more (docs/numerics.md §3.9).
  double count(double t1, double extra) const { return (bound_c_e + 4) * t1 + extra + (bound_c_t + t1) * G; }
  /// Every entry's error before F: first order in u, times 1 / (1 - count u); +inf past the domain.
  void errors(double u, double t1, double extra, double floor, std::vector<double>& out) const {
    const double N = count(t1, extra);
    const double scale = N * u < 1 ? 1 / (1 - N * u) : inf, ca = bound_c_e + 3 + G, cm = t1 + extra;
    for (std::size_t e = 0; e < M.size(); ++e)
      out[e] = (u * (ca * A[e] + cm * M[e] + bound_c_t * L[e]) + R[e] + floor) * scale;
  }
  double floor(double t1, double w, double mu) const { return t1 * (bound_c_e + 3 + 2 * w) * mu * (1 + max_p); }
};

/// The things every token's bound needs: the problem's sizes and the precisions.
struct token_context {
  std::size_t d_k, d_v;
  double w, dk;
  const recurrence_precision& prec;
  /// F times the error, plus the stored output's rounding.
  double finish(double err, ddouble o) const {
    const double b = prec.F * err;
    return std::isinf(b) ? b : b + prec.u_out * (std::fabs(o.hi) + b);  // inf, not 0 * inf, past the domain
  }
};

/// The delta rule's bound: per state column, E bounds the 2-norm of the error and U the pseudo-values' magnitude
/// sum_s D_st |u_s| (docs/numerics.md §3.9); G is the log decay since the first token.
struct delta_bound {
  std::vector<double> E, U, before, after;
  double G = 0;
  /// The last token's g_chunk: a chunked state recomputes every earlier pseudo-value's decay from cumulative sums,
  /// so its error holds g_chunk U besides the propagated E (docs/numerics.md §3.9).
  double chunk = 0;
  explicit delta_bound(std::size_t d_v) : E(d_v), U(d_v), before(d_v), after(d_v) {}

  /// One token's bounds into ob, given the norms of the raw (convolved) key and query, the state's column norms
  /// before and after it (in `before`, `after`) and the projections k^T S_{t-1}.
  void token(const token_context& x, double t1, double g, double beta, double kn, double qn, const double* mag,
             const ddouble* v, const ddouble* proj, const ddouble* o, double* ob) {
    const double u = x.prec.u, a = std::exp(g), gam = -g;
    const double *qmag = mag, *kmag = mag + x.d_k, *vmag = kmag + x.d_k;
    const double gw = gamma_k(x.w, u), g_upd = gamma_k(x.dk + 6, u), g_dot = gamma_k(x.dk, u);
    const double eps_k = kn > 0 ? 2 * gw * norm2(kmag, x.d_k) / kn + gamma_k(x.dk + 4, u) : inf;
    const double eps_q = qn > 0 ? 2 * gw * norm2(qmag, x.d_k) / qn + gamma_k(x.dk + 4, u) : inf;
    const double eps_a = (bound_c_e + bound_c_t * gam) * u;
    G += gam;
    // A chunked evaluation reads k^T S and o through the pseudo-values of up to every earlier token, each reached
    // by a decay from cumulative sums.
    const double g_chunk = gamma_k(t1 + x.dk + bound_c_e + 6, u) + (bound_c_t + t1) * G * u;
    chunk = g_chunk;
    const double floor = (x.dk + 8) * std::sqrt(x.dk) * x.prec.mu;
    const bool unbounded = std::isinf(eps_k) || std::isinf(eps_q) || std::isinf(g_chunk);
    for (std::size_t c = 0; c < x.d_v; ++c) {
      const double m = before[c] + E[c], vm = std::fabs(v[c].hi), ev = gw * vmag[c];
      const double local = g_upd * (a * (1 + beta) * m + beta * (vm + ev) * (1 + eps_k)) +
                           a * beta * (2 * eps_k + eps_k * eps_k) * m + beta * (eps_k * vm + (1 + eps_k) * ev) +
                           eps_a * a * (1 + beta) * m * (1 + eps_k) * (1 + eps_k) + beta * a * g_chunk * U[c] + floor;
      U[c] = a * U[c] + std::fabs(beta * (vm - a * proj[c].hi));
      E[c] = unbounded ? inf : a * E[c] + local;
      E[c] += x.prec.u_state * (after[c] + E[c]);
      const double err = (1 + eps_q) * E[c] + eps_q * after[c] + g_dot * (1 + eps_q) * (after[c] + E[c]) +
                         (1 + eps_q) * g_chunk * U[c] + (x.dk + 2) * x.prec.mu;
      ob[c] = x.finish(unbounded ? inf : err, o[c]);
    }
  }
};

}  // namespace recurrence_terms
}  // namespace kvconform
