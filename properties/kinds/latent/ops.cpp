// The latent kind's op builders: rows without values, and decodes whose heads fold the input class's query.
#include <Eigen/Core>
#include <cmath>
#include <deque>
#include <string>
#include <utility>

#include "properties/kinds/latent/parts.h"

namespace kvconform::kinds {

op latent_append_op(const op_target& t, std::size_t n, int ranks, std::uint64_t seed) {
  op o = append_op(t, n, ranks, seed);
  o.v = {};
  return o;
}

op latent_bad_shape_op(const op_target& t, int variant, std::uint64_t seed) {
  const std::size_t dk = t.src->d_k(), dc = t.src->d_v();
  op o = latent_append_op(t, 2, 0, seed);
  switch (variant) {
    case 0: o.k.shape = {1, 2 * dk}; break;                               // wrong width
    case 1: o.k.shape = {dk + 1}, o.k.data.resize(dk + 1); break;         // 1-D, one entry too many
    case 2: o.k.shape = {1, 2, dk}; break;                                // rank 3
    case 3: o.k.shape = {}, o.k.data.resize(1); break;                    // rank 0
    case 4: o.k.shape = {2, dk - 1}, o.k.data.resize(2 * dk - 2); break;  // one entry short
    default: o.k.shape = {2, dc}, o.k.data.resize(2 * dc); break;         // the latent part alone, no k_r
  }
  return o;
}

namespace {
using matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// One trace's head shape, from its class's query: 2 to 4 heads (so that a head's projection can be another's),
/// d_nope up to d_c (the scores keep at least the class's scale), d_vh 1 to 8; over DeepSeek-V3's rows its heads,
/// d_nope 128 and d_vh 128, with 16 query heads, or in the deep profile 16, 32, 64 or 128 (a rank's share under tensor
/// parallelism; 128 heads' projections are 128 MB, too many for quick).
struct head_shape {
  std::size_t heads, d_nope, d_vh;
};
head_shape shape_of(const row_source& src, bool deep) {
  const std::vector<double>& q = src.query();
  const std::uint64_t h = fnv1a({reinterpret_cast<const char*>(q.data()), q.size() * sizeof(double)});
  const std::size_t d_c = src.d_v();
  if (d_c == deepseek_latent && src.d_k() == deepseek_latent + deepseek_rotary) {
    constexpr std::size_t heads[] = {16, 32, 64, 128};
    return {deep ? heads[h % 4] : 16, 128, 128};
  }
  return {2 + h % 3, 1 + (h >> 8) % d_c, 1 + (h >> 16) % 8};
}

/// Entries of variance 1 drawn fast (splitmix64, uniform on [-sqrt 3, sqrt 3]): a production decode has two million.
struct entries {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double operator()() { return (double(next() >> 11) * 0x1p-53 * 2 - 1) * std::sqrt(3.0); }
};

op build_decode(const op_target& t, bool bad, int variant, std::uint64_t seed, bool deep) {
  const row_source& src = *t.src;
  const std::size_t d_c = src.d_v(), d_r = src.d_k() - d_c;
  const head_shape s = shape_of(src, deep);
  entries g{seed ^ fnv1a(std::to_string(t.first) + "/" + std::to_string(t.seq))};
  const int projection = static_cast<int>(g.next() % 3);  // unit, thousand-fold, rank-one spike
  const double scale = projection == 1 ? 1e3 : 1;
  const Eigen::Map<const Eigen::VectorXd> a(src.query().data(), static_cast<Eigen::Index>(d_c));
  op o;
  o.kind = op_kind::decode;
  o.seq = t.seq;
  o.q.shape = {s.heads, s.d_nope + d_r}, o.w_uk.shape = {s.heads, s.d_nope, d_c}, o.w_uv.shape = {s.heads, s.d_vh, d_c};
  for (std::size_t x = 0; x < s.heads; ++x) {
    // W_uk = u a^T / |u|^2 + (I - u u^T / |u|^2) N: its transpose maps q_nope = u onto a exactly, so the absorbed
    // query is the class's and the scores keep its regime, while N gives W_uk its magnitude.
    Eigen::VectorXd u(static_cast<Eigen::Index>(s.d_nope));
    for (auto& e : u) e = g();
    matrix n(u.size(), a.size()), v(static_cast<Eigen::Index>(s.d_vh), a.size());
    for (auto* m : {&n, &v})
      for (Eigen::Index i = 0; i < m->size(); ++i) m->data()[i] = scale * g() / std::sqrt(double(d_c));
    if (projection == 2) {
      Eigen::VectorXd l(a.size());
      for (auto& e : l) e = g();
      n += 1e3 * Eigen::VectorXd::Ones(u.size()).normalized() * l.normalized().transpose();
    }
    const matrix w = u * a.transpose() / u.squaredNorm() + n - u * (u.transpose() * n) / u.squaredNorm();
    o.q.data.insert(o.q.data.end(), u.data(), u.data() + u.size());
    o.q.data.insert(o.q.data.end(), src.query().begin() + static_cast<std::ptrdiff_t>(d_c), src.query().end());
    o.w_uk.data.insert(o.w_uk.data.end(), w.data(), w.data() + w.size());
    o.w_uv.data.insert(o.w_uv.data.end(), v.data(), v.data() + v.size());
  }
  if (bad && variant == 0) o.q.shape = {o.q.data.size()};
  if (bad && variant == 1)
    o.w_uk.shape = {s.heads, s.d_nope, d_c - 1}, o.w_uk.data.resize(s.heads * s.d_nope * (d_c - 1));
  return o;
}
}  // namespace

op latent_decode_op(const op_target& t, bool bad, int variant, std::uint64_t seed, bool deep) {
  // A generated op is made when it is generated, checked and run (commands.h): the last few are kept, by everything
  // the op depends on, so that a production decode's projections are drawn once.
  const std::vector<double>& q = t.src->query();
  const std::string key = content_hash({reinterpret_cast<const char*>(q.data()), q.size() * sizeof(double)}) + "/" +
                          std::to_string(t.src->d_k()) + "/" + std::to_string(t.src->d_v()) + "/" +
                          std::to_string(t.first) + "/" + std::to_string(t.seq) + "/" + std::to_string(seed) + "/" +
                          std::to_string(bad) + "/" + std::to_string(variant) + "/" + std::to_string(deep);
  thread_local std::deque<std::pair<std::string, op>> made;
  for (const auto& [k, o] : made)
    if (k == key) return o;
  if (made.size() == 4) made.pop_front();
  return made.emplace_back(key, build_decode(t, bad, variant, seed, deep)).second;
}

op latent_prefill_op(op append, const std::shared_ptr<const row_source>& src, bool deep) {
  op& o = append;
  if (o.k.shape.size() == 1) o.k.shape = {1, o.k.shape[0]};
  const std::size_t m = o.k.shape[0];
  const std::uint64_t seed = fnv1a({reinterpret_cast<const char*>(o.k.data.data()), o.k.data.size() * sizeof(double)});
  const op d = latent_decode_op(op_target{src, 0, o.seq}, false, 0, seed, deep);
  o.kind = op_kind::prefill;
  o.q.shape = {m, d.q.shape[0], d.q.shape[1]};
  for (std::size_t i = 0; i < m; ++i) o.q.data.insert(o.q.data.end(), d.q.data.begin(), d.q.data.end());
  o.w_uk = d.w_uk, o.w_uv = d.w_uv;
  return o;
}

}  // namespace kvconform::kinds
