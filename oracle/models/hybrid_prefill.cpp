// The hybrid model's prefill (docs/kinds/hybrid.md): an append whose queries each layer attends causally over the
// rows that layer reads at the query's row.
#include <algorithm>

#include "oracle/models/hybrid_model.h"

namespace kvconform {

expectation hybrid_model::prefill(const op& o) {
  const std::size_t layers_n = layers(), n = o.k.shape.size() == 3 ? o.k.shape[1] : 0;
  const auto it = seqs_.find(o.seq);
  // One sink logit per layer's head with learned sinks (docs/numerics.md §7.1).
  if (o.q.shape != std::vector<std::size_t>{layers_n, n, config_.d_k} || !sinks_fit(profile_, o.sinks, layers_n))
    return {.accepted = false, .reasons = refuse_shape | (it == seqs_.end() ? refuse_index : refuse_none)};
  std::vector<stored_stream> before;  // per layer, the rows it reads now
  const std::size_t len = it == seqs_.end() ? 0 : it->second.len, W = config_.window, keep = config_.keep;
  if (it != seqs_.end()) before = it->second.rows;
  expectation e = append(o, true);
  if (!e.accepted || n == 0) return e;
  const std::size_t span = W - std::min(W, keep), first = std::max(keep, len + 1 > span ? len + 1 - span : 0);
  // Query 0 reads row `first`; the window after the last query no longer does (writes_[1]: the sliding group writes).
  last_.read_then_dropped = writes_[1] && first <= len && first + span < len + n;
  for (std::size_t l = 0; l < layers_n; ++l) {
    const std::size_t src = source_[l];
    const bool is_cross = types_[l] == type::cross, windowed = types_[src] == type::sliding;
    stored_stream rows = is_cross ? seqs_.at(o.seq).rows[src] : before[src];
    std::vector<std::size_t> at;  // the positions of its rows: a window's sinks, then the rows it holds up to len
    const std::size_t held = rows.size(), sinks = windowed ? std::min(keep, held) : 0;
    for (std::size_t p = 0; p < (is_cross ? config_.cross : len); ++p)
      if (!windowed || p < sinks || p + (held - sinks) >= len) at.push_back(p);
    for (std::size_t i = 0; !is_cross && i < n; ++i) {
      auto row = [&](const tensor& t, std::size_t d) {
        std::vector<double> r(t.data.begin() + static_cast<std::ptrdiff_t>((src * n + i) * d),
                              t.data.begin() + static_cast<std::ptrdiff_t>((src * n + i + 1) * d));
        for (double& x : r) x = round_to(profile_.storage, x);
        return r;
      };
      rows.push(row(o.k, config_.d_k), row(o.v, config_.d_v)), at.push_back(len + i);
    }
    add_queries(e, rows, static_cast<std::size_t>(stream_index(o.seq, l)), o.q.data.data() + l * n * config_.d_k, n,
                config_.d_k, profile_, [&](std::size_t i, std::size_t j) {
                  const std::size_t p = at[j], row = len + i;
                  return is_cross || (p <= row && (!windowed || p < keep || p + span > row));
                });
  }
  stamp_attention(e, profile_, o.sinks, n);
  return e;
}

}  // namespace kvconform
