// The moves of the targeted numeric search: scores shaped against the decode's query, values, lengths.
#include "properties/generate/search_moves.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "oracle/models/model.h"
#include "properties/executor/kind_table.h"
#include "properties/trace/kind_spec.h"

namespace kvconform::search {

namespace {
double uniform(random_engine& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
double gauss(random_engine& rng) { return std::normal_distribution<double>()(rng); }

bool carries_rows(const op& o) { return (o.kind == op_kind::append || o.kind == op_kind::update) && !o.k.data.empty(); }

/// Steps of a k or v tensor: its second-to-last axis ((n, width) for the rows kinds, (B, H, n, D)
/// for beam; every kind's vocabulary puts the steps there), 1 for a 1-D row.
std::size_t steps(const tensor& t) { return t.shape.size() >= 2 ? t.shape[t.shape.size() - 2] : 1; }

/// The `width`-wide rows of a tensor; `step` keeps the rows at that step only (SIZE_MAX: all).
std::vector<double*> rows_of(tensor& t, std::size_t width, std::size_t step = SIZE_MAX) {
  std::vector<double*> out;
  if (width == 0 || t.data.size() % width != 0) return out;
  const std::size_t n = steps(t), count = t.data.size() / width;
  for (std::size_t r = 0; r < count; ++r)
    if (step == SIZE_MAX || r % n == step) out.push_back(t.data.data() + r * width);
  return out;
}

/// The ops whose rows the decode most likely attends: accepted appends or updates of its sequence and layer.
std::vector<op*> stream_ops(candidate& c) {
  const op& d = c.t.ops.back();
  std::vector<op*> out;
  for (std::size_t i = 0; i + 1 < c.t.ops.size(); ++i) {
    op& o = c.t.ops[i];
    if (c.accepted[i] && carries_rows(o) && o.seq == d.seq && o.layer == d.layer) out.push_back(&o);
  }
  return out;
}

std::vector<double*> stream_rows(candidate& c, bool keys) {
  std::vector<double*> out;
  for (op* o : stream_ops(c)) {
    const auto rows = keys ? rows_of(o->k, c.t.config.d_k) : rows_of(o->v, c.t.config.d_v);
    out.insert(out.end(), rows.begin(), rows.end());
  }
  return out;
}

/// Scores against the decode's query: s(k) = k . q / sqrt(d_k), and a key moved along q to score tau
/// (its components orthogonal to q, and so its cancellation, stay).
struct shaper {
  std::vector<double> q;
  double norm2 = 0, root_d;
  explicit shaper(const candidate& c) : root_d(std::sqrt(static_cast<double>(c.t.config.d_k))) {
    const auto& data = c.t.ops.back().q.data;
    q.assign(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(std::min(c.t.config.d_k, data.size())));
    for (double x : q) norm2 += x * x;
  }
  double score(const double* k) const {
    double s = 0;
    for (std::size_t j = 0; j < q.size(); ++j) s += k[j] * q[j];
    return s / root_d;
  }
  void set(double* k, double tau) const {
    const double step = (tau - score(k)) * root_d / norm2;
    for (std::size_t j = 0; j < q.size(); ++j) k[j] += step * q[j];
  }
  bool usable() const { return std::isfinite(norm2) && norm2 > 0; }
};

/// Every query head of the decode reads the first head's query (a random +-1 query if that one is
/// zero or not finite), so that one shaped score holds for every problem of the decode.
bool shape_query(candidate& c, random_engine& rng, const numeric_profile& p) {
  tensor& q = c.t.ops.back().q;
  const std::size_t d = c.t.config.d_k;
  if (d == 0 || q.data.size() < d || q.data.size() % d != 0) return false;
  if (!shaper(c).usable())
    for (std::size_t j = 0; j < d; ++j) q.data[j] = (rng() & 1) ? 1.0 : -1.0;
  for (std::size_t at = d; at < q.data.size(); at += d) std::copy_n(q.data.begin(), d, q.data.begin() + at);
  return examine(c, p);
}

/// The largest score among the rows the decode attends (every problem), -inf if none is finite.
double attended_max(const candidate& c) {
  double m = -std::numeric_limits<double>::infinity();
  for (const attention_problem& a : c.problems)
    for (std::size_t i = 0; i < a.n; ++i) {
      if (!a.is_live(i)) continue;
      double s = 0;
      for (std::size_t j = 0; j < a.d_k; ++j) s += a.keys[i * a.d_k + j] * a.q[j];
      s /= std::sqrt(static_cast<double>(a.d_k));
      if (std::isfinite(s)) m = std::max(m, s);
    }
  return m;
}

/// Appends n rows, copies of the rows the decode attends (of its row `only` alone, if given), right
/// before it (the kind's own lengthen: into its sequence or layer, with the capacity raised); they
/// are then the second-to-last op.
bool lengthen(candidate& c, std::size_t n, const numeric_profile& p, std::size_t only = SIZE_MAX) {
  const auto grow = kind_of(c.t.config.kind).lengthen;
  // A top-k query attends K rows, fewer than a tile, and the rows would need index keys (docs/numerics.md §7.4).
  if (!grow || c.problems.empty() || c.problems.front().n == 0 || p.attention.top_k > 0) return false;
  const attention_problem& a = c.problems.front();
  tensor k{{n, a.d_k}, {}}, v{{n, a.d_v}, {}};
  for (std::size_t r = 0; r < n; ++r) {
    const auto i = static_cast<std::ptrdiff_t>(only < a.n ? only : r % a.n);
    k.data.insert(k.data.end(), a.keys.begin() + i * a.d_k, a.keys.begin() + (i + 1) * a.d_k);
    v.data.insert(v.data.end(), a.values.begin() + i * a.d_v, a.values.begin() + (i + 1) * a.d_v);
  }
  auto longer = grow(c.t, k, v);
  // A trace the codec would refuse could not be saved and replayed.
  if (!longer || spec_of(longer->config.kind).cells(longer->config) > spec_of(longer->config.kind).max_cells)
    return false;
  c.t = std::move(*longer);
  return examine(c, p) && c.accepted[c.t.ops.size() - 2];
}
}  // namespace

namespace {
/// More than a tile of rows (a kernel that tiles by 32, 64 or 128 and forgets later tiles), the newest
/// the maximum: by more than exp's overflow threshold (canonical), or by a gap anywhere from 1e-6 up.
bool max_past_tile(candidate& c, random_engine& rng, const numeric_profile& p, bool canonical) {
  static constexpr std::size_t tiles[] = {32, 64, 128};
  const std::size_t tile = canonical ? tiles[0] : tiles[rng() % std::size(tiles)];
  if (!shape_query(c, rng, p) || !lengthen(c, tile + 1 + rng() % (tile / 4 + 1), p)) return false;
  const shaper s(c);
  const double top = attended_max(c);
  if (!s.usable() || !std::isfinite(top)) return false;
  const double gap = canonical || (rng() & 1) ? uniform(rng, 710, 800) : std::pow(10.0, uniform(rng, -6, 2.5));
  tensor& k = c.t.ops[c.t.ops.size() - 2].k;
  for (double* row : rows_of(k, c.t.config.d_k, steps(k) - 1)) s.set(row, top + gap);
  return examine(c, p);
}

/// Rows whose weights exp(s - m) spread log-uniformly (one per stratum) over the 27 decades just
/// above four times the working precision's smallest normal: the bottom of the range a cache must
/// still weigh, where one that flushes or drops tiny weights differs.
bool tiny_tail(candidate& c, random_engine& rng, const numeric_profile& p, bool canonical) {
  if (!shape_query(c, rng, p)) return false;
  const double top = attended_max(c);
  const std::size_t n = canonical ? 12 : 5 + rng() % 12;
  if (!std::isfinite(top) || !lengthen(c, n, p)) return false;
  const shaper s(c);
  if (!s.usable()) return false;
  const double deepest = -std::log(4 * smallest_normal(p.working)), shallowest = deepest - 62;
  tensor& k = c.t.ops[c.t.ops.size() - 2].k;
  const auto rows = rows_of(k, c.t.config.d_k);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double stratum = (static_cast<double>(r % n) + uniform(rng, 0, 1)) / static_cast<double>(n);
    s.set(rows[r], top - (shallowest + stratum * (deepest - shallowest)));
  }
  return examine(c, p);
}

/// 64 .. 192 copies (128 canonical) of one attended row: a greedy loop stuck on one token. Adding
/// the same term to a growing sum rounds the same way at every step, so the normaliser's and the
/// output's summation errors add up instead of cancelling (docs/numerics.md §5.1).
bool repeated_rows(candidate& c, random_engine& rng, const numeric_profile& p, bool canonical) {
  if (c.problems.empty() || c.problems.front().n == 0) return false;
  return lengthen(c, canonical ? 128 : 64 + rng() % 129, p, rng() % c.problems.front().n);
}

/// One to three keys a gap of 1e-9 .. 3 below the maximum: near ties, where the weights' conditioning peaks.
bool near_tie(candidate& c, random_engine& rng, const numeric_profile& p) {
  if (!shape_query(c, rng, p)) return false;
  const shaper s(c);
  const double top = attended_max(c);
  const auto rows = stream_rows(c, true);
  if (!s.usable() || !std::isfinite(top) || rows.empty()) return false;
  for (std::size_t i = 1 + rng() % 3; i > 0; --i)
    s.set(rows[rng() % rows.size()], top - std::pow(10.0, uniform(rng, -9, 0.5)));
  return examine(c, p);
}

/// Key components orthogonal to q of 10 .. 10^4 times the key's size: a_i far above |s_i|.
bool cancellation(candidate& c, random_engine& rng, const numeric_profile& p, bool canonical) {
  const shaper s(c);
  const std::size_t d = c.t.config.d_k;
  if (d < 2 || !s.usable()) return false;
  for (double* k : stream_rows(c, true)) {
    if (!canonical && (rng() & 1)) continue;
    std::vector<double> g(d);
    double along = 0, norm = 0, size = 0;
    for (std::size_t j = 0; j < d; ++j) g[j] = gauss(rng), along += g[j] * s.q[j], size += k[j] * k[j];
    for (std::size_t j = 0; j < d; ++j) g[j] -= along / s.norm2 * s.q[j], norm += g[j] * g[j];
    if (!(norm > 0)) continue;
    const double scale = std::pow(10.0, uniform(rng, 1, 4)) * (1 + std::sqrt(size)) / std::sqrt(norm);
    for (std::size_t j = 0; j < d; ++j) k[j] += scale * g[j];
  }
  return examine(c, p);
}

/// Values offset far from zero, spread over twelve decades, or alternating in sign so that the output cancels.
bool values(candidate& c, random_engine& rng, const numeric_profile& p, bool canonical) {
  const auto rows = stream_rows(c, false);
  if (rows.empty()) return false;
  const int how = canonical ? 0 : static_cast<int>(rng() % 3);
  const double shift = ((rng() & 1) ? 1 : -1) * std::pow(10.0, uniform(rng, 2, 6));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double spread = std::pow(10.0, uniform(rng, -6, 6));
    for (std::size_t j = 0; j < c.t.config.d_v; ++j) {
      double& x = rows[r][j];
      x = how == 0 ? x + shift : how == 1 ? x * spread : x + ((r & 1) ? shift : -shift);
    }
  }
  return examine(c, p);
}

/// The query scaled by 10^-0.5 .. 10^1.5: every score (and the spread between them) with it.
bool magnitude(candidate& c, random_engine& rng, const numeric_profile& p, bool canonical) {
  const double f = std::pow(10.0, canonical ? uniform(rng, 0.5, 1.5) : uniform(rng, -0.5, 1.5));
  for (double& x : c.t.ops.back().q.data) x *= f;
  return examine(c, p);
}

/// Every query entry times 1 + 2^-45 .. 2^-20 (a random sign each): every score, and so every
/// rounding of the decode, drawn again in the same regime (hill climbing on err/bound).
bool reroll(candidate& c, random_engine& rng, const numeric_profile& p) {
  tensor& q = c.t.ops.back().q;
  const std::size_t d = c.t.config.d_k;
  if (d == 0 || q.data.size() % d != 0) return false;
  for (std::size_t j = 0; j < d; ++j) {
    const double f = 1 + std::ldexp(gauss(rng), -static_cast<int>(20 + rng() % 26));
    for (std::size_t at = j; at < q.data.size(); at += d) q.data[at] *= f;  // every head alike
  }
  return examine(c, p);
}
}  // namespace

bool examine(candidate& c, const numeric_profile& p) {
  c.accepted.assign(c.t.ops.size(), 0);
  c.problems.clear();
  if (c.t.ops.empty() || c.t.ops.back().kind != op_kind::decode) return false;
  const auto m = make_model(c.t.config, p, c.t.policies);
  for (std::size_t i = 0; i < c.t.ops.size(); ++i) {
    expectation e = m->apply(c.t.ops[i]);
    c.accepted[i] = e.accepted;
    if (i + 1 == c.t.ops.size()) c.problems = std::move(e.problems);
  }
  for (const attention_problem& a : c.problems)
    if (a.latent) return false;  // a latent head's keys are no trace's rows: the moves cannot write them back
  for (const attention_problem& a : c.problems)
    if (a.n > 0) return c.accepted.back();
  return false;
}

trace focus(const cache_config& config, const std::vector<op>& ops, std::size_t at) {
  trace f;
  f.config = config;
  for (std::size_t i = 0; i < at && i < ops.size(); ++i)
    if (ops[i].kind != op_kind::decode) f.ops.push_back(ops[i]);
  if (at < ops.size()) f.ops.push_back(ops[at]);
  return f;
}

bool apply(move m, candidate& c, random_engine& rng, const numeric_profile& p, bool canonical) {
  switch (m) {
    case move::max_past_tile: return max_past_tile(c, rng, p, canonical);
    case move::tiny_tail: return tiny_tail(c, rng, p, canonical);
    case move::repeated_rows: return repeated_rows(c, rng, p, canonical);
    case move::near_tie: return near_tie(c, rng, p);
    case move::cancellation: return cancellation(c, rng, p, canonical);
    case move::values: return values(c, rng, p, canonical);
    case move::magnitude: return magnitude(c, rng, p, canonical);
    case move::reroll: return reroll(c, rng, p);
  }
  return false;
}

}  // namespace kvconform::search
