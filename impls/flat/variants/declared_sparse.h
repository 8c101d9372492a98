// Flat caches computing sparse top-k (docs/numerics.md §7.4): an indexer over its own block-planar fp8 index cache.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "impls/common/append_steps.h"
#include "impls/flat/flat.h"
#include "impls/flat/variants/planar_index.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// The decisions of a sparse flat cache that its mutants change, one each.
struct sparse_rules {
  static constexpr bool relu = true;               ///< each head's score passes through max(0, .) before its weight
  static constexpr bool per_head = false;          ///< each head picks its own k rows (mlx-lm PR #531), not their sum
  static constexpr bool interleaved_read = false;  ///< reads the planar index as row-interleaved (vLLM #50576)
};

/// Keeps every row as flat does, and each row's index key in a planar_index; a decode and a prefill attend the k
/// visible rows of highest index score sum_h w_h max(0, q_h . key), an earlier row first among equal scores, with
/// A::value's window, sinks and cap. `A` declares e4m3 row-scaled index keys (what planar_index stores).
template <class A, class Rules = sparse_rules>
class flat_sparse : public basic_flat<> {
  static constexpr attention_semantics a = A::value;
  static_assert(a.top_k > 0 && a.index_element == element_format::e4m3 && a.index_row_scaled);

 public:
  static constexpr numeric_profile profile{.attention = a};
  flat_sparse(std::size_t max_len, std::size_t d_k, std::size_t d_v)
      : basic_flat(max_len, d_k, d_v), index_(a.index_width) {}

  void append(array_view k, array_view v, indexer_view x = {}) {
    check_index_keys(k, x.keys);
    const std::size_t before = size();
    basic_flat::append(k, v);
    for (std::size_t i = before; i < size(); ++i) index_.push(x.keys.data + (i - before) * a.index_width);
  }

  decode_result decode(array_view q, array_view sinks, indexer_view x) const {
    check_queries(x, 1, false);
    if (q.rank != 1 || q.dims[0] != d_k()) throw shape_error("decode_step: q must be 1-D of width d_k");
    const score_terms t = declared_terms(a, sinks);
    if (size() == 0) throw empty_error("decode_step: empty cache");
    const std::size_t p = size() - 1;
    return attend_one(
        q.data, x.queries.data, x.weights.data, [p](std::size_t r) { return a.sees(p, r); }, t);
  }

  decode_result prefill(array_view k, array_view v, array_view q, array_view sinks, indexer_view x) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v()), before = size();
    check_index_keys(k, x.keys);
    check_queries(x, steps, true);
    check_prefill_queries(q, steps, d_k());
    const score_terms t = declared_terms(a, sinks);
    append(k, v, x);
    const std::size_t n = size(), h = a.index_heads, w = a.index_width;
    decode_result r{Eigen::VectorXd::Zero(static_cast<Eigen::Index>(steps * d_v())),
                    Eigen::VectorXd::Zero(static_cast<Eigen::Index>(steps * n))};
    for (std::size_t i = 0; i < steps; ++i) {
      const decode_result one = attend_one(
          q.data + i * d_k(), x.queries.data + i * h * w, x.weights.data + i * h,
          [p = before + i](std::size_t row) { return a.sees(p, row); }, t);
      r.output.segment(static_cast<Eigen::Index>(i * d_v()), static_cast<Eigen::Index>(d_v())) = one.output;
      r.weights.segment(static_cast<Eigen::Index>(i * n), static_cast<Eigen::Index>(n)) = one.weights;
    }
    return r;
  }

  void rollback(std::size_t n) {
    basic_flat::rollback(n);
    index_.truncate(size());
  }

 private:
  /// Finite and at most 2^64 in magnitude (docs/numerics.md §7.4).
  static bool in_range(array_view t) {
    return std::all_of(t.data, t.data + t.size(), [](double x) { return std::fabs(x) <= 0x1p64; });
  }
  void check_index_keys(array_view k, array_view ik) const {
    const steps_of ks(k), is(ik);
    if (!is.ok || ik.rank != k.rank || is.width != a.index_width || is.steps != ks.steps || !in_range(ik))
      throw shape_error("index_k: one finite row of the indexer's width per step, shaped as k");
  }
  /// Decode (`prefill` false): index_q (heads, width), index_w (heads); a prefill's with a leading `steps`.
  static void check_queries(indexer_view x, std::size_t steps, bool prefill) {
    const std::size_t h = a.index_heads, w = a.index_width;
    const bool q_ok =
        prefill ? x.queries.rank == 3 && x.queries.dims[0] == steps && x.queries.dims[1] == h && x.queries.dims[2] == w
                : x.queries.rank == 2 && x.queries.dims[0] == h && x.queries.dims[1] == w;
    const bool w_ok = prefill ? x.weights.rank == 2 && x.weights.dims[0] == steps && x.weights.dims[1] == h
                              : x.weights.rank == 1 && x.weights.dims[0] == h;
    if (!q_ok || !w_ok || !in_range(x.queries) || !in_range(x.weights))
      throw shape_error("index_q, index_w: finite (heads, width) queries and (heads) weights per query");
  }

  /// The index score of every row for one query's heads `iq` and weights `iw`: head h alone, or their sum (h = heads).
  std::vector<double> scores(const double* iq, const double* iw, std::size_t head) const {
    const std::size_t w = a.index_width;
    std::vector<double> s(size(), 0.0), key(w);
    for (std::size_t r = 0; r < size(); ++r) {
      index_.read(r, key.data());
      for (std::size_t h = 0; h < a.index_heads; ++h) {
        if (head < a.index_heads && h != head) continue;
        double dot = 0;
        for (std::size_t j = 0; j < w; ++j) dot += iq[h * w + j] * key[j];
        s[r] += iw[h] * (Rules::relu ? std::max(0.0, dot) : dot);
      }
    }
    return s;
  }
  /// The k rows of `visible` with the highest scores, an earlier row first among equal ones.
  void pick(const std::vector<double>& s, std::vector<std::size_t> visible, std::vector<char>& live) const {
    std::stable_sort(visible.begin(), visible.end(), [&](std::size_t x, std::size_t y) { return s[x] > s[y]; });
    for (std::size_t i = 0; i < std::min(a.top_k, visible.size()); ++i) live[visible[i]] = 1;
  }
  template <class Sees>
  decode_result attend_one(const double* q, const double* iq, const double* iw, Sees sees, score_terms t) const {
    std::vector<std::size_t> visible;
    for (std::size_t r = 0; r < size(); ++r)
      if (sees(r)) visible.push_back(r);
    std::vector<char> live(size(), 0);
    if (visible.size() <= a.top_k)
      for (std::size_t r : visible) live[r] = 1;
    else if (Rules::per_head)
      for (std::size_t h = 0; h < a.index_heads; ++h) pick(scores(iq, iw, h), visible, live);
    else
      pick(scores(iq, iw, a.index_heads), visible, live);
    const auto k = keys();
    const auto v = values();
    return attend(
        size(), d_k(), d_v(), q, [&](std::size_t i) { return k.data() + i * d_k(); },
        [&](std::size_t i) { return v.data() + i * d_v(); }, [&](std::size_t i) { return live[i] != 0; }, t);
  }

  planar_index<Rules::interleaved_read> index_;
};

template <class A, class Rules>
decode_result decode_step(array_view q, array_view sinks, indexer_view x, const flat_sparse<A, Rules>& c) {
  return c.decode(q, sinks, x);
}

namespace declared {
/// DeepSeek V3.2's sparse attention: the 4 best rows by a 2-head indexer of width 8 over e4m3 row-scaled index keys
/// (its 2048 of 64 heads x 128 made small, so that quick traces hold more rows than it attends).
struct dsa {
  static constexpr attention_semantics value{
      .top_k = 4, .index_heads = 2, .index_width = 8, .index_element = element_format::e4m3, .index_row_scaled = true};
};
}  // namespace declared

}  // namespace kvconform
