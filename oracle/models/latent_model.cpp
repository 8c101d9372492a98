// The latent specification, written independently of the caches it judges.
#include "oracle/models/latent_model.h"

#include <iterator>

#include "oracle/numeric/latent_head.h"

namespace kvconform {

namespace {
/// The values are the keys' own entries: stored with the keys' scale, whatever v_scale says.
cache_config with_row_scale(cache_config c) {
  c.v_scale = c.k_scale;
  return c;
}
}  // namespace

latent_model::latent_model(const cache_config& c, const numeric_profile& p, bool problems)
    : block_pool_model(with_row_scale(c), p), problems_(problems) {
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

std::optional<latent_model::heads> latent_model::decode_shape(const op& o) const {
  const std::size_t d_c = config_.d_v, d_r = config_.d_k - config_.d_v;
  const auto& q = o.q.shape;
  const auto &uk = o.w_uk.shape, &uv = o.w_uv.shape;
  if (q.size() != 2 || q[0] == 0 || q[1] <= d_r || uk.size() != 3 || uv.size() != 3) return std::nullopt;
  if (uk[0] != q[0] || uk[1] != q[1] - d_r || uk[2] != d_c || uv[0] != q[0] || uv[1] == 0 || uv[2] != d_c)
    return std::nullopt;
  return heads{q[0], q[1] - d_r, uv[1]};
}

expectation latent_model::decode(const op& o) const {
  expectation e;
  auto refuse = [&](unsigned why) { e.accepted = false, e.reasons |= why; };
  const auto shape = decode_shape(o);
  if (!is_live(o.seq)) refuse(refuse_index);
  if (!shape) refuse(refuse_shape);
  if (is_live(o.seq) && size(o.seq) == 0) refuse(refuse_empty);
  if (!e.accepted || !problems_) return e;
  const stored_rows& rows = at(o.seq).rows.keys;
  auto rounded = [&](const std::vector<double>& from, std::size_t begin, std::size_t n) {
    std::vector<double> r;
    for (std::size_t i = begin; i < begin + n; ++i) r.push_back(round_to(profile_.storage, from[i]));
    return r;
  };
  latent_head h{rows.size(), config_.d_v, config_.d_k - config_.d_v, shape->d_nope, shape->d_vh, {}, {}, {}, {},
                {},          {}};
  for (std::size_t i = 0; i < rows.size(); ++i)
    h.rows.insert(h.rows.end(), rows.stored(i).begin(), rows.stored(i).end());
  const std::size_t d_q = shape->d_nope + h.d_r;
  for (std::size_t x = 0; x < shape->count; ++x) {
    h.q_nope = rounded(o.q.data, x * d_q, shape->d_nope);
    h.q_r = rounded(o.q.data, x * d_q + shape->d_nope, h.d_r);
    h.w_uk = rounded(o.w_uk.data, x * shape->d_nope * h.d_c, shape->d_nope * h.d_c);
    h.w_uv = rounded(o.w_uv.data, x * shape->d_vh * h.d_c, shape->d_vh * h.d_c);
    e.problems.push_back(materialise(h));
  }
  return e;
}

void latent_model::count(snapshot& out) const {
  out.counters.emplace_back("free_blocks", static_cast<std::int64_t>(available_blocks()));
  const double block_bytes = stored_bytes(profile_.keys, config_.block_size, config_.d_k);
  out.counters.emplace_back("bytes_in_use",
                            static_cast<std::int64_t>(held_blocks()) * static_cast<std::int64_t>(block_bytes));
}

}  // namespace kvconform
