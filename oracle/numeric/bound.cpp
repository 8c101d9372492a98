// Evaluation of the componentwise bound; every term is explained in docs/numerics.md §3.
#include "oracle/numeric/bound.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvconform {

double gamma_k(double k, double u) {
  const double x = k * u;
  return x < 1 ? x / (1 - x) : std::numeric_limits<double>::infinity();
}

namespace {
/// n_r: the rescalings of an online softmax (none for two-pass, one per block after the first, one
/// per key when the block is undeclared), plus one per split-K partial after the first.
/// A learned sink is one more term to merge (docs/numerics.md §7.1).
double rescales(const numeric_profile& prof, double n, bool sink) {
  double n_r = 0;
  if (prof.online_undeclared)
    n_r = std::max(0.0, n - 1) + sink;
  else if (prof.online_block)
    n_r = std::max(0.0, std::ceil(n / static_cast<double>(prof.online_block)) - 1) + sink;
  if (prof.splits) n_r += static_cast<double>(prof.splits) - 1;
  return n_r;
}
/// sum_j |k_ij| |q_j|, or a latent head's absolute triple product (docs/numerics.md §3.8).
double magnitude(const attention_problem& p, std::size_t i) {
  if (p.latent) return p.latent->keys[i];
  double a = 0;
  for (std::size_t j = 0; j < p.d_k; ++j) a += std::fabs(p.keys[i * p.d_k + j]) * std::fabs(p.q[j]);
  return a;
}
/// A learned sink is a key with an exact score and no value: its exp's error reaches every weight through the
/// normaliser, with the sink's own weight 1 - sum_i w_i (§7.1). Its argument is sink - m or, in a kernel that
/// subtracts the scores' max only, sink - max_i s_i.
double sink_term(const attention_problem& p, const std::vector<double>& s, const std::vector<double>& w, double u) {
  double w_sink = 1, s_max = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < p.n; ++i)
    if (p.is_live(i)) w_sink -= w[i], s_max = std::max(s_max, s[i]);
  return std::max(0.0, w_sink) * std::expm1(u * (bound_c_e + bound_c_t * std::fabs(s_max - p.sink)));
}
}  // namespace

attention_bound compute_bound(const attention_problem& p, const std::vector<double>& s, double m,
                              const std::vector<double>& w, const std::vector<double>& o, const numeric_profile& prof,
                              double F) {
  const double u = unit_roundoff(prof.working);
  const double mu = prof.flush_subnormals ? smallest_normal(prof.working) : std::numeric_limits<double>::denorm_min();
  std::size_t live_n = 0;
  for (std::size_t i = 0; i < p.n; ++i) live_n += p.is_live(i);
  const double n = static_cast<double>(live_n), n_r = rescales(prof, n, p.has_sink);

  attention_bound b;
  b.output.assign(p.d_v, 0.0);
  b.weights.assign(p.n, 0.0);
  if (live_n == 0) return b;  // a fully masked row must give exact zeros

  // E_i: score error gamma_{d+6} a_i (a_i = sum |k||q| / sqrt(d), not |s_i|), exp error
  // u (c_e + c_t (m - s_i)), and P-format rounding u_P. A latent head's products run over d_c more terms and its
  // materialised rows were rounded once (§3.8). A soft cap divides by c (one more rounding) and adds tanh's own error,
  // at most c_h u c absolute; tanh's slope is at most 1, so the score's error passes through undamped at worst (§7.3).
  const latent_terms* lat = p.latent.get();
  const double extra = lat ? static_cast<double>(lat->inner) + 1 : 0;
  const double capped = p.softcap > 0 ? 1 : 0, cap_error = capped * bound_c_h * u * p.softcap;
  const double g_d = gamma_k(static_cast<double>(p.d_k) + 6 + capped + extra, u), g_v = gamma_k(extra, u);
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(p.d_k));
  std::vector<double> E(p.n, 0.0), tau(p.n, 0.0), acc(p.d_v, 0.0), vmax(p.d_v, 0.0);
  double sum_w_expm1 = 0;
  for (std::size_t i = 0; i < p.n; ++i) {
    if (!p.is_live(i)) continue;
    const double a = magnitude(p, i) * inv_sqrt_d;
    b.max_a = std::max(b.max_a, a);
    E[i] = g_d * a + cap_error + u * (bound_c_e + bound_c_t * (m - s[i])) + prof.u_p;
    sum_w_expm1 += w[i] * std::expm1(E[i]);
  }
  if (p.has_sink) sum_w_expm1 += sink_term(p, s, w, u);
  b.in_domain = b.max_a <= 1 / (64 * u);
  const double A = std::log1p(sum_w_expm1);  // normalisation error, ln sum_j w_j e^{E_j}
  const double K = n + 4 + (p.has_sink ? 1 : 0) + n_r * (bound_c_e + 2);
  const double sum_term = 2 * std::atanh(std::min(gamma_k(K, u), 1.0));
  // Row by row, so that the values are read in storage order; each column's sum keeps its order.
  for (std::size_t i = 0; i < p.n; ++i) {
    if (!p.is_live(i)) continue;
    tau[i] = std::expm1(E[i] + A + sum_term);
    // A latent value (W_uv c_i)_c, or W_uv applied after the average, adds its own products' rounding.
    const double t = lat ? tau[i] + g_v * (1 + tau[i]) : tau[i];
    for (std::size_t c = 0; c < p.d_v; ++c) {
      const double v = lat ? lat->values[i * p.d_v + c] : std::fabs(p.values[i * p.d_v + c]);
      acc[c] += w[i] * v * t;
      vmax[c] = std::max(vmax[c], v);
    }
  }
  for (std::size_t c = 0; c < p.d_v; ++c) {
    double B = F * acc[c] + (n + 2) * mu * (1 + vmax[c]);
    // A latent head's average of n latent rows may lose (n + 2) mu per latent component before W_uv scales it.
    if (lat) B += (n + 2 + extra) * mu * (1 + lat->latent_max) * (1 + lat->projections[c]);
    if (prof.u_out > 0) B += prof.u_out * (std::fabs(o[c]) + B);  // |o| + B may round to inf near DBL_MAX
    b.output[c] = B;
  }
  for (std::size_t i = 0; i < p.n; ++i)
    if (p.is_live(i)) b.weights[i] = F * w[i] * tau[i] + 2 * mu;
  return b;
}

}  // namespace kvconform
