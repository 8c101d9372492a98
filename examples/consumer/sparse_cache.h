// acme's sparse-attention cache (kvconform kind flat, declared top-k): an indexer over f32 index keys, ties to the
// newest row.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

#include "acme_support.h"
#include "tiny_cache.h"

namespace acme {

/// Keeps every row and its index key (rounded to float); a query attends the 3 rows it sees of highest
/// sum_h w_h max(0, q_h . key) over 2 index heads of width 4. Among equal scores it takes the newest row, where
/// kvconform's order takes the oldest: either is the declared attention (docs/numerics.md §7.4).
class sparse_cache {
 public:
  static constexpr std::size_t top_k = 3, heads = 2, width = 4;
  static constexpr kvconform::numeric_profile profile{
      .attention = {
          .top_k = top_k, .index_heads = heads, .index_width = width, .index_element = kvconform::element_format::f32}};

  sparse_cache(std::size_t max_len, std::size_t d_k, std::size_t d_v) : rows_(max_len, d_k, d_v) {}

  status append(kvconform::array_view k, kvconform::array_view v, kvconform::indexer_view x = {}) {
    const auto n = rows_in(k), ik = rows_in(x.keys);
    if (!n || !ik || x.keys.rank != k.rank || ik->steps != n->steps || ik->width != width || !finite(x.keys))
      return status(code::bad_shape);
    const status s = rows_.append(k, v);
    if (s.ok())
      for (std::size_t i = 0; i < n->steps * width; ++i) index_.push_back(static_cast<float>(x.keys.data[i]));
    return s;
  }

  result<decoded> prefill(kvconform::array_view k, kvconform::array_view v, kvconform::array_view q,
                          kvconform::array_view, kvconform::indexer_view x) {
    const auto n = rows_in(k);
    const std::size_t m = n ? n->steps : 0, before = rows_.size();
    if (!queries_fit(x, m, true) || q.rank != 2 || q.dims[0] != m || q.dims[1] != rows_.d_k()) return code::bad_shape;
    if (const status s = append(k, v, x); !s.ok()) return s.why();
    decoded all;
    for (std::size_t i = 0; i < m; ++i) {
      const decoded one = attend_query(before + i, q.data + i * rows_.d_k(), x.queries.data + i * heads * width,
                                       x.weights.data + i * heads);
      all.output.insert(all.output.end(), one.output.begin(), one.output.end());
      all.weights.insert(all.weights.end(), one.weights.begin(), one.weights.end());
    }
    return all;
  }

  std::size_t size() const { return rows_.size(); }
  row_view keys() const { return rows_.keys(); }
  row_view values() const { return rows_.values(); }
  std::size_t d_k() const { return rows_.d_k(); }

  /// The attention of the query at `position` over the rows up to it.
  decoded attend_query(std::size_t position, const double* q, const double* iq, const double* iw) const {
    std::vector<std::size_t> seen(position + 1);
    std::iota(seen.begin(), seen.end(), 0);
    std::vector<double> score(seen.size(), 0.0);
    for (std::size_t r : seen)
      for (std::size_t h = 0; h < heads; ++h) {
        double dot = 0;
        for (std::size_t j = 0; j < width; ++j) dot += iq[h * width + j] * index_[r * width + j];
        score[r] += iw[h] * std::max(0.0, dot);
      }
    // Newest first among equals: sort by score, then by position descending.
    std::sort(seen.begin(), seen.end(),
              [&](std::size_t a, std::size_t b) { return score[a] != score[b] ? score[a] > score[b] : a > b; });
    std::vector<char> live(size(), 0);
    for (std::size_t i = 0; i < std::min(top_k, seen.size()); ++i) live[seen[i]] = 1;
    const row_view k = keys(), v = values();
    return attend(
        size(), rows_.d_k(), rows_.d_v(), q, [&](std::size_t i) { return k.data + i * rows_.d_k(); },
        [&](std::size_t i) { return v.data + i * rows_.d_v(); }, [&](std::size_t i) { return live[i] != 0; });
  }
  static bool queries_fit(kvconform::indexer_view x, std::size_t m, bool prefill) {
    const bool q_ok = prefill ? x.queries.rank == 3 && x.queries.dims[0] == m && x.queries.dims[1] == heads &&
                                    x.queries.dims[2] == width
                              : x.queries.rank == 2 && x.queries.dims[0] == heads && x.queries.dims[1] == width;
    const bool w_ok = prefill ? x.weights.rank == 2 && x.weights.dims[0] == m && x.weights.dims[1] == heads
                              : x.weights.rank == 1 && x.weights.dims[0] == heads;
    return q_ok && w_ok && finite(x.queries) && finite(x.weights);
  }

 private:
  static bool finite(kvconform::array_view a) {
    return std::all_of(a.data, a.data + a.size(), [](double x) { return std::fabs(x) <= 0x1p64; });
  }
  tiny_cache rows_;
  std::vector<double> index_;  // each row's index key, rounded to float
};

/// Found by ADL: the decode of the newest row's query.
inline result<decoded> decode_step(kvconform::array_view q, kvconform::array_view, kvconform::indexer_view x,
                                   const sparse_cache& c) {
  if (!sparse_cache::queries_fit(x, 1, false) || q.rank != 1 || q.dims[0] != c.d_k()) return code::bad_shape;
  if (c.size() == 0) return code::empty;
  return c.attend_query(c.size() - 1, q.data, x.queries.data, x.weights.data);
}

}  // namespace acme
