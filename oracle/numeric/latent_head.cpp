// Materialising a latent head's keys and values for the oracle and its bound (docs/numerics.md §3.8).
#include "oracle/numeric/latent_head.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "oracle/numeric/dd_oracle.h"

namespace kvconform {

namespace {
/// sum_m w[m] c[m] in double-double (the oracle's score kernel), rounded once, and sum_m |w[m]| |c[m]|.
std::pair<double, double> product(const double* w, const double* c, std::size_t d) {
  const dd::ddouble s = dot_dd(w, c, d);
  double a = 0;
  for (std::size_t m = 0; m < d; ++m) a += std::fabs(w[m] * c[m]);
  return {s.hi + s.lo, a};
}

/// One row's products under one head's projections: W_uk c and W_uv c with their absolute sums.
struct row_products {
  std::vector<double> keys, key_abs, values, value_abs;
};

/// The products are most of a latent decode's cost, and a trace's decodes (a prefill's steps above all) take the same
/// rows under the same projections again: the rows' products are kept per projection pair, found by their exact bits.
/// Bounded: the last few projection pairs, each with at most `rows_per_pair` rows.
class product_memo {
 public:
  /// One projection pair's rows: found once per head (`pair_of`), then read per row (`of`).
  struct pair {
    std::vector<double> w_uk, w_uv;
    std::unordered_map<std::string, row_products> rows;

    const row_products& of(const latent_head& h, const double* c) {
      std::string key(reinterpret_cast<const char*>(c), h.d_c * sizeof(double));
      if (const auto it = rows.find(key); it != rows.end()) return it->second;
      if (rows.size() >= rows_per_pair) rows.clear();
      row_products r;
      r.keys.resize(h.d_nope), r.key_abs.resize(h.d_nope), r.values.resize(h.d_v), r.value_abs.resize(h.d_v);
      for (std::size_t j = 0; j < h.d_nope; ++j)
        std::tie(r.keys[j], r.key_abs[j]) = product(h.w_uk.data() + j * h.d_c, c, h.d_c);
      for (std::size_t v = 0; v < h.d_v; ++v)
        std::tie(r.values[v], r.value_abs[v]) = product(h.w_uv.data() + v * h.d_c, c, h.d_c);
      return rows.emplace(std::move(key), std::move(r)).first->second;
    }
  };

  pair& pair_of(const latent_head& h) {
    for (pair& p : pairs_)
      if (same(p.w_uk, h.w_uk) && same(p.w_uv, h.w_uv)) return p;
    if (pairs_.size() == pairs) pairs_.pop_front();
    return pairs_.emplace_back(pair{h.w_uk, h.w_uv, {}});
  }

 private:
  static constexpr std::size_t pairs = 8, rows_per_pair = 4096;
  static bool same(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
  }
  std::deque<pair> pairs_;
};
}  // namespace

attention_problem materialise(const latent_head& h) {
  thread_local product_memo memo;
  product_memo::pair& products = memo.pair_of(h);  // the projections compared once per head, not once per row
  const std::size_t dk = h.d_nope + h.d_r, width = h.d_c + h.d_r;
  auto t = std::make_shared<latent_terms>();
  t->inner = h.d_c;
  t->keys.assign(h.n, 0.0), t->values.assign(h.n * h.d_v, 0.0), t->projections.assign(h.d_v, 0.0);
  std::vector<double> keys(h.n * dk), values(h.n * h.d_v);
  for (std::size_t i = 0; i < h.n; ++i) {
    const double* c = h.rows.data() + i * width;
    for (std::size_t m = 0; m < h.d_c; ++m) t->latent_max = std::max(t->latent_max, std::fabs(c[m]));
    const row_products& r = products.of(h, c);
    for (std::size_t j = 0; j < h.d_nope; ++j)
      keys[i * dk + j] = r.keys[j], t->keys[i] += r.key_abs[j] * std::fabs(h.q_nope[j]);
    for (std::size_t j = 0; j < h.d_r; ++j)
      keys[i * dk + h.d_nope + j] = c[h.d_c + j], t->keys[i] += std::fabs(c[h.d_c + j] * h.q_r[j]);
    std::copy(r.values.begin(), r.values.end(), values.begin() + static_cast<std::ptrdiff_t>(i * h.d_v));
    std::copy(r.value_abs.begin(), r.value_abs.end(), t->values.begin() + static_cast<std::ptrdiff_t>(i * h.d_v));
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
