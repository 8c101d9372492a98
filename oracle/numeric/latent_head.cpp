// Materialising a latent head's keys and values for the oracle and its bound (docs/numerics.md §3.8).
#include "oracle/numeric/latent_head.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <tuple>
#include <utility>

#include "oracle/numeric/double_double.h"

namespace kvconform {

namespace {
/// sum_m w[m] c[m] in double-double, rounded once, and sum_m |w[m]| |c[m]|.
std::pair<double, double> product(const double* w, const double* c, std::size_t d) {
  dd::ddouble s;
  double a = 0;
  for (std::size_t m = 0; m < d; ++m) s = dd::add(s, dd::two_prod(w[m], c[m])), a += std::fabs(w[m] * c[m]);
  return {s.hi + s.lo, a};
}
}  // namespace

attention_problem materialise(const latent_head& h) {
  const std::size_t dk = h.d_nope + h.d_r, width = h.d_c + h.d_r;
  auto t = std::make_shared<latent_terms>();
  t->inner = h.d_c;
  t->keys.assign(h.n, 0.0), t->values.assign(h.n * h.d_v, 0.0), t->projections.assign(h.d_v, 0.0);
  std::vector<double> keys(h.n * dk), values(h.n * h.d_v);
  for (std::size_t i = 0; i < h.n; ++i) {
    const double* c = h.rows.data() + i * width;
    for (std::size_t m = 0; m < h.d_c; ++m) t->latent_max = std::max(t->latent_max, std::fabs(c[m]));
    for (std::size_t j = 0; j < h.d_nope; ++j) {
      const auto [k, a] = product(h.w_uk.data() + j * h.d_c, c, h.d_c);
      keys[i * dk + j] = k, t->keys[i] += a * std::fabs(h.q_nope[j]);
    }
    for (std::size_t j = 0; j < h.d_r; ++j)
      keys[i * dk + h.d_nope + j] = c[h.d_c + j], t->keys[i] += std::fabs(c[h.d_c + j] * h.q_r[j]);
    for (std::size_t v = 0; v < h.d_v; ++v)
      std::tie(values[i * h.d_v + v], t->values[i * h.d_v + v]) = product(h.w_uv.data() + v * h.d_c, c, h.d_c);
  }
  for (std::size_t v = 0; v < h.d_v; ++v)
    for (std::size_t m = 0; m < h.d_c; ++m) t->projections[v] += std::fabs(h.w_uv[v * h.d_c + m]);
  attention_problem p;
  p.n = h.n, p.d_k = dk, p.d_v = h.d_v;
  p.keys = std::move(keys), p.values = std::move(values);
  p.q = h.q_nope, p.q.insert(p.q.end(), h.q_r.begin(), h.q_r.end());
  p.live = h.live;
  p.latent = std::move(t);
  return p;
}

}  // namespace kvconform
