// The beam specification, written independently of the caches it judges.
#include "oracle/models/beam_model.h"

#include <array>
#include <cstdint>
#include <string>

namespace kvconform {

namespace {
/// Bytes one stored value takes in the implementation's storage format.
std::int64_t scalar_bytes(precision p) {
  switch (p) {
    case precision::f64: return 8;
    case precision::f32: return 4;
    case precision::bf16: return 2;
  }
  return 8;
}
}  // namespace

beam_model::beam_model(const cache_config& c, const numeric_profile& p)
    : config_(c), profile_(p), layers_(c.layers, layer(c.batch, batch_row(c.heads))) {}

expectation beam_model::apply(const op& o) {
  switch (o.kind) {
    case op_kind::update: return update(o);
    case op_kind::reorder: return reorder(o);
    case op_kind::decode: return decode(o);
    default: return {false, refuse_shape};  // not a beam op
  }
}

expectation beam_model::update(const op& o) {
  const cache_config& c = config_;
  auto block = [&](const tensor& t) {
    return t.shape.size() == 4 && t.shape[0] == c.batch && t.shape[1] == c.heads && t.shape[3] == c.d_k;
  };
  const bool layer_ok = o.layer >= 0 && static_cast<std::size_t>(o.layer) < c.layers;
  const bool shape_ok = block(o.k) && block(o.v) && o.k.shape[2] == o.v.shape[2];
  expectation e;
  if (!layer_ok) e.reasons |= refuse_index;
  if (!shape_ok) e.reasons |= refuse_shape;
  if (layer_ok && (o.start < 0 || static_cast<std::size_t>(o.start) > length(static_cast<std::size_t>(o.layer))))
    e.reasons |= refuse_index;
  // Capacity applies whenever k says how many steps it writes, whatever else is wrong.
  if (o.k.shape.size() == 4 && o.start >= 0 && static_cast<std::size_t>(o.start) + o.k.shape[2] > c.capacity)
    e.reasons |= refuse_capacity;
  e.accepted = e.reasons == refuse_none;
  if (!e.accepted) return e;

  const auto start = static_cast<std::size_t>(o.start);
  const std::size_t n = o.k.shape[2], d = c.d_k;
  layer& l = layers_[static_cast<std::size_t>(o.layer)];
  for (std::size_t b = 0; b < c.batch; ++b)
    for (std::size_t h = 0; h < c.heads; ++h) {
      head_rows& rows = l[b][h];
      rows.keys.resize(start), rows.values.resize(start);  // a start below the length truncates first
      for (std::size_t t = 0; t < n; ++t) {
        const std::size_t at = ((b * c.heads + h) * n + t) * d;
        row k(o.k.data.begin() + static_cast<std::ptrdiff_t>(at),
              o.k.data.begin() + static_cast<std::ptrdiff_t>(at + d));
        row v(o.v.data.begin() + static_cast<std::ptrdiff_t>(at),
              o.v.data.begin() + static_cast<std::ptrdiff_t>(at + d));
        for (double& x : k) x = round_to(profile_.storage, x);
        for (double& x : v) x = round_to(profile_.storage, x);
        rows.keys.push_back(std::move(k));
        rows.values.push_back(std::move(v));
      }
    }
  return e;
}

expectation beam_model::reorder(const op& o) {
  expectation e;
  if (o.index.size() != config_.batch) e.reasons |= refuse_shape;
  for (std::int64_t i : o.index)
    if (i < 0 || static_cast<std::size_t>(i) >= config_.batch) e.reasons |= refuse_index;
  e.accepted = e.reasons == refuse_none;
  if (!e.accepted) return e;
  for (layer& l : layers_) {
    const layer old = l;
    for (std::size_t b = 0; b < config_.batch; ++b) l[b] = old[static_cast<std::size_t>(o.index[b])];
  }
  return e;
}

expectation beam_model::decode(const op& o) {
  const cache_config& c = config_;
  const bool layer_ok = o.layer >= 0 && static_cast<std::size_t>(o.layer) < c.layers;
  const std::size_t len = layer_ok ? length(static_cast<std::size_t>(o.layer)) : 0;
  const bool q_ok = o.q.shape.size() == 3 && o.q.shape[0] == c.batch && o.q.shape[1] > 0 &&
                    o.q.shape[1] % c.heads == 0 && o.q.shape[2] == c.d_k;
  const bool has_mask = !o.mask.shape.empty();  // rank 0: every position attends
  expectation e;
  if (!layer_ok) e.reasons |= refuse_index;
  if (!q_ok) e.reasons |= refuse_shape;
  if (layer_ok && has_mask && o.mask.shape != std::vector<std::size_t>{c.batch, len}) e.reasons |= refuse_shape;
  if (layer_ok && len == 0) e.reasons |= refuse_empty;
  e.accepted = e.reasons == refuse_none;
  if (!e.accepted) return e;

  const std::size_t q_heads = o.q.shape[1], d = c.d_k;
  const layer& l = layers_[static_cast<std::size_t>(o.layer)];
  for (std::size_t b = 0; b < c.batch; ++b)
    for (std::size_t h = 0; h < q_heads; ++h) {
      const head_rows& rows = l[b][h / (q_heads / c.heads)];  // grouped-query attention
      attention_problem p;
      p.n = len, p.d_k = d, p.d_v = d;
      for (std::size_t i = 0; i < len; ++i) {
        p.keys.insert(p.keys.end(), rows.keys[i].begin(), rows.keys[i].end());
        p.values.insert(p.values.end(), rows.values[i].begin(), rows.values[i].end());
        if (has_mask) p.live.push_back(o.mask.data[b * len + i] != 0);
      }
      for (std::size_t j = 0; j < d; ++j)
        p.q.push_back(round_to(profile_.storage, o.q.data[(b * q_heads + h) * d + j]));
      e.problems.push_back(std::move(p));
    }
  return e;
}

snapshot beam_model::observe() const {
  const cache_config& c = config_;
  snapshot s;
  for (std::size_t l = 0; l < c.layers; ++l) {
    s.counters.emplace_back("layer " + std::to_string(l) + " length", static_cast<std::int64_t>(length(l)));
    for (std::size_t b = 0; b < c.batch; ++b)
      for (std::size_t h = 0; h < c.heads; ++h) {
        stream st;
        st.name = "layer " + std::to_string(l) + " row " + std::to_string(b) + " head " + std::to_string(h);
        st.d_k = st.d_v = c.d_k;
        for (const row& k : layers_[l][b][h].keys) st.keys.add(k.data(), k.size());  // views, compared in place
        for (const row& v : layers_[l][b][h].values) st.values.add(v.data(), v.size());
        s.streams.push_back(std::move(st));
      }
  }
  const std::int64_t scalar = scalar_bytes(profile_.storage);
  const auto [L, B, H, T, D] = std::array{c.layers, c.batch, c.heads, c.capacity, c.d_k};
  const auto per_token = static_cast<std::int64_t>(2 * L * H * D) * scalar;
  s.counters.emplace_back("bytes", static_cast<std::int64_t>(2 * L * B * H * T * D) * scalar);
  s.counters.emplace_back("bytes_per_token", per_token);
  s.counters.emplace_back("max_batch_tokens", static_cast<std::int64_t>(beam_memory_budget) / per_token);
  return s;
}

}  // namespace kvconform
