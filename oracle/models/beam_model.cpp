// The beam specification, written independently of the caches it judges.
#include "oracle/models/beam_model.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

namespace kvconform {

namespace {
/// The format whose bytes a side takes: its own, or for plain f64 rows the storage precision
/// they arrive in (a float32 cache that declares only `storage = f32` stores 4 bytes a value).
storage_format bytes_format(const storage_format& f, precision storage) {
  if (f.rounds() || storage == precision::f64) return f;
  return storage == precision::f32 ? formats::f32 : formats::bf16;
}
}  // namespace

beam_model::beam_model(const cache_config& c, const numeric_profile& p)
    : config_(c),
      profile_(p),
      layers_(c.layers, layer(c.batch, batch_row(c.heads, stored_stream(p.keys, p.values, c, c.d_k, c.d_k)))) {}

expectation beam_model::apply(const op& o) {
  switch (o.kind) {
    case op_kind::update: return update(o);
    case op_kind::reorder: return reorder(o);
    case op_kind::decode: return decode(o);
    case op_kind::prefill: return prefill(o);
    default: return {false, refuse_shape};  // not a beam op
  }
}

expectation beam_model::update(const op& o) {
  expectation e = update_refusals(o);
  e.accepted = e.reasons == refuse_none;
  if (e.accepted) write(o);
  return e;
}

expectation beam_model::update_refusals(const op& o) const {
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
  return e;
}

void beam_model::write(const op& o) {
  const cache_config& c = config_;
  const auto start = static_cast<std::size_t>(o.start);
  const std::size_t n = o.k.shape[2], d = c.d_k;
  layer& l = layers_[static_cast<std::size_t>(o.layer)];
  for (std::size_t b = 0; b < c.batch; ++b)
    for (std::size_t h = 0; h < c.heads; ++h) {
      stored_stream& rows = l[b][h];
      rows.keys.truncate(std::min(start, rows.size())), rows.values.truncate(std::min(start, rows.size()));
      for (std::size_t t = 0; t < n; ++t) {
        const auto at = static_cast<std::ptrdiff_t>(((b * c.heads + h) * n + t) * d);
        auto row_of = [&](const tensor& x) {
          std::vector<double> r(x.data.begin() + at, x.data.begin() + at + static_cast<std::ptrdiff_t>(d));
          for (double& y : r) y = round_to(profile_.storage, y);
          return r;
        };
        rows.push(row_of(o.k), row_of(o.v));
      }
    }
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
  for (std::size_t b = 0; b < c.batch; ++b)
    for (std::size_t h = 0; h < q_heads; ++h) {
      const std::size_t kv = h / (q_heads / c.heads);  // grouped-query attention
      std::vector<unsigned char> live;
      for (std::size_t i = 0; has_mask && i < len; ++i) live.push_back(o.mask.data[b * len + i] != 0);
      std::vector<double> q;
      for (std::size_t j = 0; j < d; ++j) q.push_back(round_to(profile_.storage, o.q.data[(b * q_heads + h) * d + j]));
      const std::size_t stream = (static_cast<std::size_t>(o.layer) * c.batch + b) * c.heads + kv;
      add_decode(e, layers_[static_cast<std::size_t>(o.layer)][b][kv], stream, std::move(q), profile_, std::move(live));
    }
  return e;
}

expectation beam_model::prefill(const op& o) {
  const cache_config& c = config_;
  const bool layer_ok = o.layer >= 0 && static_cast<std::size_t>(o.layer) < c.layers;
  const std::size_t before = layer_ok ? length(static_cast<std::size_t>(o.layer)) : 0;
  // The equivalent update, at the layer's length, decides every refusal but the queries' and the mask's.
  op u = o;
  u.kind = op_kind::update, u.start = static_cast<std::int64_t>(before);
  expectation e = update_refusals(u);
  if (o.k.shape.size() == 4) {
    const std::size_t m = o.k.shape[2];
    const std::vector<std::size_t> mask{c.batch, before + m};
    if (o.q.shape.size() != 4 || o.q.shape[0] != c.batch || o.q.shape[1] == 0 || o.q.shape[1] % c.heads != 0 ||
        o.q.shape[2] != m || o.q.shape[3] != c.d_k || (layer_ok && !o.mask.shape.empty() && o.mask.shape != mask))
      e.reasons |= refuse_shape;
  }
  e.accepted = e.reasons == refuse_none;
  if (!e.accepted) return e;
  write(u);
  prefill_problems(o, before, o.k.shape[2], e);
  return e;
}

void beam_model::prefill_problems(const op& o, std::size_t before, std::size_t m, expectation& e) const {
  const cache_config& c = config_;
  const std::size_t q_heads = o.q.shape[1], d = c.d_k, n = before + m, layer = static_cast<std::size_t>(o.layer);
  const bool has_mask = !o.mask.shape.empty(), given = profile_.rounds_storage();
  for (std::size_t b = 0; b < c.batch; ++b) {
    // Each kv head's rows once, as stored (and as given, when the storage rounds), one block shared by the
    // problems of every query that reads them.
    std::vector<shared_doubles> rows;  // per kv head: keys, values, given keys, given values
    for (std::size_t kv = 0; kv < c.heads; ++kv) {
      const stored_stream& s = layers_[layer][b][kv];
      std::vector<double> k, v, gk, gv;
      for (std::size_t t = 0; t < n; ++t) {
        auto add = [](std::vector<double>& out, std::span<const double> row) {
          out.insert(out.end(), row.begin(), row.end());
        };
        add(k, s.keys.stored(t)), add(v, s.values.stored(t));
        if (given) add(gk, s.keys.given(t)), add(gv, s.values.given(t));
      }
      for (auto* x : {&k, &v, &gk, &gv}) rows.emplace_back(std::move(*x));
    }
    for (std::size_t h = 0; h < q_heads; ++h) {
      const std::size_t kv = h / (q_heads / c.heads);  // grouped-query attention
      for (std::size_t i = 0; i < m; ++i) {
        attention_problem p;
        p.n = n, p.d_k = p.d_v = d, p.keys = rows[4 * kv], p.values = rows[4 * kv + 1];
        for (std::size_t j = 0; j < d; ++j)
          p.q.push_back(round_to(profile_.storage, o.q.data[((b * q_heads + h) * m + i) * d + j]));
        // Query i sits at position before + i: it sees that one and every one before it the mask does not hide.
        bool all = true;
        for (std::size_t t = 0; t < n; ++t) {
          p.live.push_back(t <= before + i && (!has_mask || o.mask.data[b * n + t] != 0));
          all = all && p.live.back();
        }
        if (all) p.live.clear();
        if (given) {
          attention_problem g = p;
          g.keys = rows[4 * kv + 2], g.values = rows[4 * kv + 3];
          e.originals.push_back(std::move(g));
        }
        e.problems.push_back(std::move(p));
        e.streams.push_back((layer * c.batch + b) * c.heads + kv);
      }
    }
  }
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
        layers_[l][b][h].expose(st);
        s.streams.push_back(std::move(st));
      }
  }
  // Storage for all T positions is reserved up front, in the formats' bytes (docs/numerics.md §6.3).
  const auto [L, B, H, T, D] = std::array{c.layers, c.batch, c.heads, c.capacity, c.d_k};
  const double per_row =
      static_cast<double>(L * H) * (stored_bytes(bytes_format(profile_.keys, profile_.storage), T, D) +
                                    stored_bytes(bytes_format(profile_.values, profile_.storage), T, D));
  const auto bytes = static_cast<std::int64_t>(per_row) * static_cast<std::int64_t>(B);
  const std::int64_t per_token = static_cast<std::int64_t>(per_row) / static_cast<std::int64_t>(T);
  s.counters.emplace_back("bytes", bytes);
  s.counters.emplace_back("bytes_per_token", per_token);
  s.counters.emplace_back("max_batch_tokens", static_cast<std::int64_t>(beam_memory_budget) / per_token);
  return s;
}

}  // namespace kvconform
