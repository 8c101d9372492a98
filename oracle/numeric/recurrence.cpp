// The recurrence in double-double and its bound; every term of the bound is explained in docs/numerics.md §3.9.
#include "oracle/numeric/recurrence.h"

#include <cmath>
#include <limits>
#include <string>

namespace kvconform {

const char* to_string(recurrence_form f) { return f == recurrence_form::decay ? "decay" : "delta"; }

std::string recurrence_problem::invalid() const {
  const std::size_t ch = channels(), T = steps();
  if (d_k == 0 || d_v == 0) return "d_k and d_v must be positive";
  if (width == 0) return "the convolution's width must be at least 1";
  if (conv.size() != width * ch) return "conv must hold width x (2 d_k + d_v) taps";
  if (x.size() != T * ch) return "x must hold one row of 2 d_k + d_v channels per log decay";
  if (form == recurrence_form::delta && beta.size() != T) return "the delta rule needs one write strength per token";
  for (double v : g)
    if (!(v <= 0)) return "log decays must be <= 0";
  for (double b : beta)
    if (!(b >= 0 && b <= 1)) return "write strengths must lie in [0, 1]";
  for (const auto* values : {&conv, &x})
    for (double v : *values)
      if (!std::isfinite(v)) return "taps and inputs must be finite";
  return {};
}

namespace {
using dd::ddouble;
constexpr double inf = std::numeric_limits<double>::infinity();

/// sqrt of a double-double: the root of the high part and one Newton step on the exact residual.
ddouble sqrt_dd(ddouble a) {
  if (a.hi <= 0) return {0, 0};
  const double r = std::sqrt(a.hi);
  return dd::fast_two_sum(r, dd::sub(a, dd::two_prod(r, r)).hi / (2 * r));
}

/// Token t's convolved channels in double-double (exact products, double-double sums) and their magnitudes
/// sum_i |conv_i| |x_{t-i}| in double.
void convolve(const recurrence_problem& p, std::size_t t, std::vector<ddouble>& out, std::vector<double>& mag) {
  const std::size_t ch = p.channels();
  for (std::size_t c = 0; c < ch; ++c) {
    ddouble s{};
    double m = 0;
    for (std::size_t i = 0; i < p.width && i <= t; ++i) {
      const double tap = p.conv[i * ch + c], x = p.x[(t - i) * ch + c];
      s = dd::add(s, dd::two_prod(tap, x)), m += std::fabs(tap) * std::fabs(x);
    }
    out[c] = s, mag[c] = m;
  }
}

/// Divides v[0, n) by its 2-norm in double-double; returns the norm (0 leaves v as it is: zeros).
double normalise(ddouble* v, std::size_t n) {
  ddouble s{};
  for (std::size_t j = 0; j < n; ++j) s = dd::add(s, dd::mul(v[j], v[j]));
  const ddouble norm = sqrt_dd(s);
  if (norm.hi > 0)
    for (std::size_t j = 0; j < n; ++j) v[j] = dd::div(v[j], norm);
  return norm.hi;
}

double norm2(const double* v, std::size_t n) {
  double s = 0;
  for (std::size_t j = 0; j < n; ++j) s += v[j] * v[j];
  return std::sqrt(s);
}

/// a + b to about 2u^2 of |a| + |b| (one TwoSum): enough wherever the bound is relative to the terms' magnitudes,
/// as every sum of the recurrence is (docs/numerics.md §3.9).
ddouble accumulate(ddouble a, ddouble b) {
  const ddouble s = dd::two_sum(a.hi, b.hi);
  return dd::fast_two_sum(s.hi, s.lo + (a.lo + b.lo));
}

/// The O(d_k d_v) part of a token: for the delta rule the projection p = k^T S first, then the update, then the
/// read-out o_c = sum_j q_j S_jc.
struct sweep {
  ddouble* S;
  std::size_t d_k, d_v;
  ddouble alpha;
  const ddouble *q, *k, *v;
  double beta;  ///< the delta rule's; a negative one selects the decay form
  ddouble *proj, *o;
};
[[gnu::always_inline]] inline void sweep_body(const sweep& a) {
  const std::size_t dv = a.d_v;
  if (a.beta >= 0) {
    for (std::size_t c = 0; c < dv; ++c) a.proj[c] = {};
    for (std::size_t j = 0; j < a.d_k; ++j)
      for (std::size_t c = 0; c < dv; ++c) a.proj[c] = accumulate(a.proj[c], dd::mul(a.k[j], a.S[j * dv + c]));
    for (std::size_t j = 0; j < a.d_k; ++j) {
      const ddouble bk = dd::mul(a.k[j], a.beta);
      for (std::size_t c = 0; c < dv; ++c) {
        ddouble& e = a.S[j * dv + c];
        e = accumulate(dd::mul(a.alpha, accumulate(e, dd::neg(dd::mul(bk, a.proj[c])))), dd::mul(bk, a.v[c]));
      }
    }
  } else {
    for (std::size_t j = 0; j < a.d_k; ++j)
      for (std::size_t c = 0; c < dv; ++c)
        a.S[j * dv + c] = accumulate(dd::mul(a.alpha, a.S[j * dv + c]), dd::mul(a.k[j], a.v[c]));
  }
  for (std::size_t c = 0; c < dv; ++c) a.o[c] = {};
  for (std::size_t j = 0; j < a.d_k; ++j)
    for (std::size_t c = 0; c < dv; ++c) a.o[c] = accumulate(a.o[c], dd::mul(a.q[j], a.S[j * dv + c]));
}
void sweep_generic(const sweep& a) { sweep_body(a); }
#if defined(__x86_64__) && defined(__GNUC__)
// The same operations with hardware FMA in the TwoProducts (docs/numerics.md §1.5: the same bits, at less cost).
__attribute__((target("avx2,fma"))) void sweep_fma(const sweep& a) { sweep_body(a); }
void run_sweep(const sweep& a, dd_kernels k) {
  const bool fma = k == dd_kernels::fma || (k == dd_kernels::automatic && dd_fma_kernels_available());
  fma ? sweep_fma(a) : sweep_generic(a);
}
#else
void run_sweep(const sweep& a, dd_kernels) { sweep_generic(a); }
#endif

void column_norms(const std::vector<ddouble>& S, std::size_t d_k, std::size_t d_v, std::vector<double>& out) {
  for (std::size_t c = 0; c < d_v; ++c) {
    double s = 0;
    for (std::size_t j = 0; j < d_k; ++j) s += S[j * d_v + c].hi * S[j * d_v + c].hi;
    out[c] = std::sqrt(s);
  }
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
    for (std::size_t j = 0; j < d_k; ++j)
      for (std::size_t c = 0; c < d_v; ++c) {
        const std::size_t e = j * d_v + c;
        const double P = kmag[j] * vmag[c];
        L[e] = a * (L[e] + gam * M[e]);
        A[e] = a * (A[e] + M[e]) + P;
        M[e] = a * M[e] + P;
        R[e] = a * R[e] + u_state * M[e];
        max_p = std::max(max_p, P);
      }
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
    return b + prec.u_out * (std::fabs(o.hi) + b);
  }
};

/// The delta rule's bound: per state column, E bounds the 2-norm of the error and U the pseudo-values' magnitude
/// sum_s D_st |u_s| (docs/numerics.md §3.9); G is the log decay since the first token.
struct delta_bound {
  std::vector<double> E, U, before, after;
  double G = 0;
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
}  // namespace

recurrence_run run_recurrence(const recurrence_problem& p, const recurrence_precision& prec, dd_kernels kernels) {
  const std::size_t d_k = p.d_k, d_v = p.d_v, ch = p.channels(), T = p.steps();
  const token_context x{d_k, d_v, static_cast<double>(p.width), static_cast<double>(d_k), prec};
  const bool delta = p.form == recurrence_form::delta;
  recurrence_run r;
  r.outputs.assign(T * d_v, {}), r.state.assign(d_k * d_v, {});
  r.output_bound.assign(T * d_v, 0), r.state_bound.assign(d_k * d_v, 0);
  std::vector<ddouble> xc(ch), proj(d_v);
  std::vector<double> mag(ch), entries(d_k * d_v);
  decay_bound db(delta ? 0 : d_k * d_v);
  delta_bound eb(delta ? d_v : 0);

  for (std::size_t t = 0; t < T; ++t) {
    convolve(p, t, xc, mag);
    ddouble *q = xc.data(), *k = q + d_k, *v = k + d_k;
    const ddouble alpha = dd::exp({p.g[t], 0});
    ddouble* o = &r.outputs[t * d_v];
    double* ob = &r.output_bound[t * d_v];
    const double t1 = static_cast<double>(t + 1);
    if (delta) {
      const double kn = normalise(k, d_k), qn = normalise(q, d_k);
      column_norms(r.state, d_k, d_v, eb.before);
      run_sweep({r.state.data(), d_k, d_v, alpha, q, k, v, p.beta[t], proj.data(), o}, kernels);
      column_norms(r.state, d_k, d_v, eb.after);
      eb.token(x, t1, p.g[t], p.beta[t], kn, qn, mag.data(), v, proj.data(), o, ob);
      continue;
    }
    run_sweep({r.state.data(), d_k, d_v, alpha, q, k, v, -1.0, proj.data(), o}, kernels);
    db.step(alpha.hi, -p.g[t], mag.data() + d_k, mag.data() + 2 * d_k, d_k, d_v, prec.u_state);
    db.errors(prec.u, t1, 3 * x.w + x.dk + 4, db.floor(t1, x.w, prec.mu), entries);  // + convolutions, read-out
    for (std::size_t c = 0; c < d_v; ++c) ob[c] = 0;
    for (std::size_t j = 0; j < d_k; ++j)
      for (std::size_t c = 0; c < d_v; ++c) ob[c] += mag[j] * entries[j * d_v + c];
    for (std::size_t c = 0; c < d_v; ++c) ob[c] = x.finish(ob[c] + (x.dk + 2) * prec.mu, o[c]);
  }

  if (delta)
    for (std::size_t e = 0; e < d_k * d_v; ++e) r.state_bound[e] = prec.F * eb.E[e % d_v];
  else if (T > 0)
    db.errors(prec.u, static_cast<double>(T), 2 * x.w + 2, db.floor(static_cast<double>(T), x.w, prec.mu),
              r.state_bound);
  if (!delta)
    for (double& b : r.state_bound) b *= prec.F;
  return r;
}

}  // namespace kvconform
