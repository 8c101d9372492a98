// The latent specification, written independently of the caches it judges.
#include "oracle/models/latent_model.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>

#include "oracle/numeric/latent_head.h"

namespace kvconform {

namespace {
/// The values are the keys' own entries: stored with the keys' scale, whatever v_scale says.
cache_config with_row_scale(cache_config c) {
  c.v_scale = c.k_scale;
  return c;
}
}  // namespace

latent_model::latent_model(const cache_config& c, const numeric_profile& p, const policy_set& policies, bool problems)
    : block_pool_model(with_row_scale(c), p, policies), problems_(problems) {
  profile_.values = profile_.keys;
}

std::optional<std::size_t> latent_model::steps_of(const op& o) const {
  if (!o.v.shape.empty()) return std::nullopt;  // values come from the rows themselves
  if (o.k.shape.size() == 1 && o.k.shape[0] == config_.d_k) return 1;
  if (o.k.shape.size() == 2 && o.k.shape[1] == config_.d_k) return o.k.shape[0];
  return std::nullopt;
}

std::vector<double> latent_model::value_row(const op& o, std::size_t i) const {
  std::vector<double> r = stored_row(o.k, i, profile_.storage);
  r.resize(config_.d_v);
  return r;
}

std::optional<latent_model::heads> latent_model::decode_shape(const op& o, std::size_t rank) const {
  const std::size_t d_c = config_.d_v, d_r = config_.d_k - config_.d_v;
  const auto &q = o.q.shape, &uk = o.w_uk.shape, &uv = o.w_uv.shape;
  if (q.size() != rank || uk.size() != 3 || uv.size() != 3) return std::nullopt;
  const std::size_t count = q[rank - 2], d_q = q[rank - 1];  // a prefill's q is (m, Hq, d_q)
  if (count == 0 || d_q <= d_r || uk[0] != count || uk[1] != d_q - d_r || uk[2] != d_c || uv[0] != count ||
      uv[1] == 0 || uv[2] != d_c)
    return std::nullopt;
  return heads{count, d_q - d_r, uv[1]};
}

expectation latent_model::decode(const op& o) const {
  expectation e;
  auto refuse = [&](unsigned why) { e.accepted = false, e.reasons |= why; };
  const auto shape = decode_shape(o, 2);
  if (!is_live(o.seq)) refuse(refuse_index);
  if (!shape) refuse(refuse_shape);
  if (is_live(o.seq) && size(o.seq) == 0) refuse(refuse_empty);
  if (e.accepted && problems_) judge(o, heads_of(o, *shape, 0, size(o.seq)), e);
  return e;
}

bool latent_model::prefill_queries(const op& o, std::size_t steps) const {
  const auto shape = decode_shape(o, 3);
  return shape && o.q.shape[0] == steps;
}

void latent_model::prefill_problems(const op& o, std::size_t before, expectation& e) const {
  if (!problems_) return;
  const heads shape = *decode_shape(o, 3);
  std::vector<latent_head> all;
  for (std::size_t i = 0; i < o.q.shape[0]; ++i) {
    std::vector<latent_head> step = heads_of(o, shape, i, before + i + 1);
    all.insert(all.end(), std::make_move_iterator(step.begin()), std::make_move_iterator(step.end()));
  }
  judge(o, std::move(all), e);
}

std::vector<latent_head> latent_model::heads_of(const op& o, const heads& shape, std::size_t step,
                                                std::size_t seen) const {
  const stored_rows& rows = at(o.seq).rows.keys;
  auto rounded = [&](const std::vector<double>& from, std::size_t begin, std::size_t n) {
    std::vector<double> r;
    for (std::size_t i = begin; i < begin + n; ++i) r.push_back(round_to(profile_.storage, from[i]));
    return r;
  };
  latent_head h{rows.size(), config_.d_v, config_.d_k - config_.d_v, shape.d_nope, shape.d_vh, {}, {}, {}, {}, {}, {}};
  for (std::size_t i = 0; i < rows.size(); ++i)
    h.rows.insert(h.rows.end(), rows.stored(i).begin(), rows.stored(i).end());
  if (seen < rows.size())  // a prefill's query sees the rows up to its own (docs/design.md §2.3)
    for (std::size_t i = 0; i < rows.size(); ++i) h.live.push_back(i < seen ? 1 : 0);
  const std::size_t d_q = shape.d_nope + h.d_r, first = step * shape.count * d_q;
  std::vector<latent_head> out;
  for (std::size_t x = 0; x < shape.count; ++x) {
    h.q_nope = rounded(o.q.data, first + x * d_q, shape.d_nope);
    h.q_r = rounded(o.q.data, first + x * d_q + shape.d_nope, h.d_r);
    h.w_uk = rounded(o.w_uk.data, x * shape.d_nope * h.d_c, shape.d_nope * h.d_c);
    h.w_uv = rounded(o.w_uv.data, x * shape.d_vh * h.d_c, shape.d_vh * h.d_c);
    out.push_back(h);
  }
  return out;
}

namespace {
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// Every head's materialised problem, in order. A prefill's steps share their heads' projections and rows and, as
/// generated, their queries: a head that is an earlier one but for `live` takes that one's problem with its own
/// mask, which is what materialise gives it (materialising is most of a prefill's cost otherwise).
std::vector<attention_problem> materialise_all(const std::vector<latent_head>& heads) {
  std::vector<attention_problem> out;
  for (std::size_t i = 0; i < heads.size(); ++i) {
    const latent_head& h = heads[i];
    const auto same = std::find_if(heads.begin(), heads.begin() + static_cast<std::ptrdiff_t>(i), [&](const auto& g) {
      return same_bits(g.q_nope, h.q_nope) && same_bits(g.q_r, h.q_r) && same_bits(g.w_uk, h.w_uk) &&
             same_bits(g.w_uv, h.w_uv) && same_bits(g.rows, h.rows);
    });
    if (same == heads.begin() + static_cast<std::ptrdiff_t>(i)) {
      out.push_back(materialise(h));
    } else {
      out.push_back(out[static_cast<std::size_t>(same - heads.begin())]);
      out.back().live = h.live;
    }
  }
  return out;
}
}  // namespace

void latent_model::judge(const op& o, std::vector<latent_head> heads, expectation& e) const {
  // Streams are in handle order, so a sequence's place among the live ones is its stream's index.
  const auto stream = static_cast<std::size_t>(std::distance(sequences().begin(), sequences().find(o.seq)));
  e.problems = materialise_all(heads);
  e.streams.assign(e.problems.size(), stream);
  if (!profile_.keys.groups) return;
  // Integer groups: a decode is judged over the rows the cache exposes (docs/numerics.md §6), each head materialised
  // again from them, unless they are the model's rows bit for bit (as a cache that quantises alike exposes them).
  auto kept = std::make_shared<std::pair<std::vector<latent_head>, std::vector<attention_problem>>>(std::move(heads),
                                                                                                    e.problems);
  e.rematerialise = [kept](const shared_doubles& rows) {
    auto& [hs, problems] = *kept;
    if (!hs.empty() && same_bits(hs.front().rows, rows.vector())) return problems;  // every head reads the same rows
    for (latent_head& h : hs) h.rows.assign(rows.begin(), rows.end());
    return materialise_all(hs);
  };
}

void latent_model::count(snapshot& out) const {
  out.counters.emplace_back("free_blocks", static_cast<std::int64_t>(available_blocks()));
  const double block_bytes = stored_bytes(profile_.keys, config_.block_size, config_.d_k);
  out.counters.emplace_back("bytes_in_use",
                            static_cast<std::int64_t>(held_blocks()) * static_cast<std::int64_t>(block_bytes));
}

}  // namespace kvconform
