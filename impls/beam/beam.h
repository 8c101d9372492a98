// The reference beam KV cache (docs/kinds/beam.md): layers x batch x kv heads, double precision.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include "impls/common/attention.h"
#include "impls/common/formats.h"
#include "impls/common/row_storage.h"

namespace kvconform {

/// One layer's filled positions, read-only: element (b, h, t, j) of a (B, H, length, D) array,
/// named as Eigen::Tensor names them (`dimension(i)`, `operator()`) so that a third party's
/// tensor map fits the same concept. Valid until the next update or reorder.
class beam_view {
 public:
  beam_view(std::vector<const double*> rows, std::size_t heads, std::size_t max_len, std::size_t length,
            std::size_t head_dim)
      : rows_(std::move(rows)), max_len_(max_len), dims_{rows_.size(), heads, length, head_dim} {}

  double operator()(std::size_t b, std::size_t h, std::size_t t, std::size_t j) const { return row(b, h, t)[j]; }
  /// The D values of position t of row b, head h.
  const double* row(std::size_t b, std::size_t h, std::size_t t) const {
    return rows_[b] + (h * max_len_ + t) * dims_[3];
  }
  std::size_t dimension(std::size_t i) const { return dims_[i]; }

 private:
  std::vector<const double*> rows_;  // per batch row, its (H, T, D) block
  std::size_t max_len_;
  std::array<std::size_t, 4> dims_;
};

/// Leaves the elements of a vector default-initialised: a cache that reserves all of max_len up front
/// touches only the memory it writes (the harness draws beam caches of more than 2^24 elements,
/// docs/design.md §4.4); positions are never read before they are written.
template <class T>
struct untouched_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = untouched_allocator<U>;
  };
  untouched_allocator() = default;
  template <class U>
  untouched_allocator(const untouched_allocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// What a beam cache does on reorder, rollback and prefill. Mutants replace one rule (impls/beam/mutants/*.h).
struct beam_rules {
  using storage = storage_policy<>;  ///< the formats keys and values are stored in (docs/numerics.md §6)
  /// The decode arithmetic, masking included.
  using kernel = attention_kernel;
  /// How many layers, from layer 0, a reorder gathers: all of them.
  static std::size_t reordered_layers(std::size_t layers) { return layers; }
  /// The block new row b gets from old row `source`; `repeat` when an earlier row already took
  /// that block. A repeat gets its own copy, so a later write to one twin never reaches the other.
  template <class Block>
  static std::shared_ptr<Block> take(const std::shared_ptr<Block>& source, bool repeat) {
    return repeat ? std::make_shared<Block>(*source) : source;
  }
  /// A layer's length after writing n positions at `start`: a start below the length truncates first.
  static std::size_t length_after(std::size_t /*length*/, std::size_t start, std::size_t n) { return start + n; }
  /// Whether query i of a prefill onto `before` positions sees position j: its own position before + i and every
  /// one before it (the causal mask aligned to the chunk's end, not to its start).
  static bool sees(std::size_t before, std::size_t i, std::size_t j) { return j <= before + i; }
};

/// K and V for L layers x B batch rows x H kv heads x T positions x D, stored as (L, B, H, T, D):
/// each (layer, row) owns one (H, T, D) block of keys and one of values, so a reorder moves whole
/// rows by handle and copies only the rows that repeat (beam search keeps most of its beams).
/// Every layer keeps its own length. Refusals throw and change nothing.
template <class Rules = beam_rules>
class basic_beam {
  using storage = typename Rules::storage;
  using side = side_storage<typename storage::rules>;
  static constexpr bool formats = storage::keys.rounds() || storage::values.rounds();
  static constexpr bool groups = storage::keys.groups || storage::values.groups;

 public:
  basic_beam(std::size_t layers, std::size_t batch, std::size_t kv_heads, std::size_t max_len, std::size_t head_dim)
      : batch_(batch), heads_(kv_heads), max_len_(max_len), head_dim_(head_dim), length_(layers, 0) {
    if (layers == 0 || batch == 0 || kv_heads == 0 || max_len == 0 || head_dim == 0)
      throw shape_error("beam: layers, batch, kv_heads, max_len and head_dim must be positive");
    for (std::size_t i = 0; i < layers * batch; ++i)
      rows_.push_back(std::make_shared<row_block>(block_size(), formats ? heads_ * max_len_ : 0, heads_, head_dim_));
  }
  // A copy would share row blocks with the original (a reorder shares them by handle).
  basic_beam(const basic_beam&) = delete;
  basic_beam& operator=(const basic_beam&) = delete;

  /// Writes positions [start, start + n) of `layer` from k and v shaped (B, H, n, D) and returns
  /// views of [0, start + n). start = length(layer) appends (a prefill of n prompt steps, or one
  /// decode step); a start below it truncates first (rolling back rejected draft tokens in
  /// speculative decoding); n = 0 only truncates. Throws index_error for a bad layer or a start
  /// beyond the length, shape_error for bad shapes, capacity_error when start + n > max_len.
  std::pair<beam_view, beam_view> update(std::size_t layer, array_view k, array_view v, std::size_t start) {
    check_layer(layer, "update");
    if (!is_block(k) || !is_block(v) || k.dims[2] != v.dims[2])
      throw shape_error("update: k and v must be (B, H, n, D) with the same n");
    if (start > length_[layer]) throw index_error("update: start beyond the layer's length");
    const std::size_t n = k.dims[2];
    if (n > max_len_ - start) throw capacity_error("update: start + n exceeds max_len");
    for (std::size_t b = 0; b < batch_; ++b) {
      row_block& r = *rows_[layer * batch_ + b];
      r.written = std::max(r.written, (start + n) * head_dim_);
      if constexpr (formats) {
        write_formats(r, k, v, b, start, n);
        continue;
      }
      for (std::size_t h = 0; h < heads_; ++h)
        for (std::size_t t = 0; t < n; ++t)
          for (std::size_t j = 0; j < head_dim_; ++j) {
            const std::size_t from = ((b * heads_ + h) * n + t) * head_dim_ + j,
                              to = (h * max_len_ + start + t) * head_dim_ + j;
            r.k[to] = k.data[from];
            r.v[to] = v.data[from];
          }
    }
    length_[layer] = Rules::length_after(length_[layer], start, n);
    return {keys(layer), values(layer)};
  }

  /// In every layer, row b becomes old row beam_idx[b]: a gather along the batch axis, repeats
  /// and drops allowed. Throws shape_error unless there are B indices and index_error for an
  /// index outside [0, B).
  void reorder(std::span<const std::int64_t> beam_idx) {
    if (beam_idx.size() != batch_) throw shape_error("reorder: need one index per batch row");
    for (std::int64_t i : beam_idx)
      if (i < 0 || static_cast<std::size_t>(i) >= batch_) throw index_error("reorder: index out of range");
    for (std::size_t l = 0; l < Rules::reordered_layers(layers()); ++l) {
      const auto first = rows_.begin() + static_cast<std::ptrdiff_t>(l * batch_);
      const std::vector<std::shared_ptr<row_block>> old(first, first + static_cast<std::ptrdiff_t>(batch_));
      std::vector<bool> taken(batch_, false);
      for (std::size_t b = 0; b < batch_; ++b) {
        const auto source = static_cast<std::size_t>(beam_idx[b]);
        rows_[l * batch_ + b] = Rules::take(old[source], taken[source]);
        taken[source] = true;
      }
    }
  }

  /// Attention of every (row b, query head h) over `layer`: q is (B, Hq, D) with Hq a multiple
  /// of H, and query head h reads kv head h / (Hq / H) (grouped-query attention); mask is absent
  /// (rank 0) or (B, length), where 0 marks a position that takes exactly zero weight. Output
  /// (B, Hq, D) and weights (B, Hq, length), row-major; a fully masked row gives zeros. Throws
  /// index_error for a bad layer, shape_error for bad q or mask shapes, empty_error on an empty layer.
  decode_result decode(std::size_t layer, array_view q, array_view mask) const {
    check_layer(layer, "decode");
    const std::size_t len = length_[layer];
    if (q.rank != 3 || q.dims[0] != batch_ || q.dims[1] == 0 || q.dims[1] % heads_ != 0 || q.dims[2] != head_dim_)
      throw shape_error("decode: q must be (B, Hq, D) with Hq a multiple of the kv heads");
    if (mask.rank != 0 && (mask.rank != 2 || mask.dims[0] != batch_ || mask.dims[1] != len))
      throw shape_error("decode: mask must be (B, length)");
    if (len == 0) throw empty_error("decode: empty layer");
    const std::size_t q_heads = q.dims[1], group = q_heads / heads_;
    const beam_view k = keys(layer), v = values(layer);
    decode_result r{Eigen::VectorXd(static_cast<Eigen::Index>(batch_ * q_heads * head_dim_)),
                    Eigen::VectorXd(static_cast<Eigen::Index>(batch_ * q_heads * len))};
    for (std::size_t b = 0; b < batch_; ++b)
      for (std::size_t h = 0; h < q_heads; ++h) {
        const std::size_t kv = h / group, at = b * q_heads + h;
        const decode_result d = attend<typename Rules::kernel>(
            len, head_dim_, head_dim_, q.data + at * head_dim_, [&](std::size_t i) { return k.row(b, kv, i); },
            [&](std::size_t i) { return v.row(b, kv, i); },
            [&](std::size_t i) { return mask.rank == 0 || mask.data[b * len + i] != 0; });
        r.output.segment(static_cast<Eigen::Index>(at * head_dim_), static_cast<Eigen::Index>(head_dim_)) = d.output;
        r.weights.segment(static_cast<Eigen::Index>(at * len), static_cast<Eigen::Index>(len)) = d.weights;
      }
    return r;
  }

  /// Appends the m positions of k and v, (B, H, m, D), at the layer's length as update does, then attends with query
  /// i of q (B, Hq, m, D), at position length + i: query head h of row b reads kv head h / (Hq / H) over the
  /// positions up to its own that mask (absent, or (B, length + m) as decode's) does not hide. Output
  /// (B, Hq, m, D) and weights (B, Hq, m, length + m), row-major, 0 where a query does not see a position. Throws
  /// as that update would, or shape_error for q or mask, before anything changes; m = 0 changes nothing.
  decode_result prefill(std::size_t layer, array_view k, array_view v, array_view q, array_view mask) {
    check_layer(layer, "prefill");
    if (!is_block(k) || !is_block(v) || k.dims[2] != v.dims[2])
      throw shape_error("prefill: k and v must be (B, H, m, D) with the same m");
    const std::size_t m = k.dims[2], before = length_[layer], n = before + m, d = head_dim_;
    if (q.rank != 4 || q.dims[0] != batch_ || q.dims[1] == 0 || q.dims[1] % heads_ != 0 || q.dims[2] != m ||
        q.dims[3] != d)
      throw shape_error("prefill: q must be (B, Hq, m, D) with Hq a multiple of the kv heads");
    if (mask.rank != 0 && (mask.rank != 2 || mask.dims[0] != batch_ || mask.dims[1] != n))
      throw shape_error("prefill: mask must be (B, length + m)");
    update(layer, k, v, before);  // capacity_error past max_len, before any write
    const std::size_t q_heads = q.dims[1], group = q_heads / heads_;
    const beam_view kv = keys(layer), vv = values(layer);
    decode_result r{Eigen::VectorXd(static_cast<Eigen::Index>(batch_ * q_heads * m * d)),
                    Eigen::VectorXd(static_cast<Eigen::Index>(batch_ * q_heads * m * n))};
    for (std::size_t b = 0; b < batch_; ++b)
      for (std::size_t h = 0; h < q_heads; ++h) {
        const std::size_t head = h / group, at = b * q_heads + h;
        const decode_result one = attend_causal<typename Rules::kernel>(
            m, n, d, d, q.data + at * m * d, [&](std::size_t j) { return kv.row(b, head, j); },
            [&](std::size_t j) { return vv.row(b, head, j); },
            [&](std::size_t i, std::size_t j) {
              return Rules::sees(before, i, j) && (mask.rank == 0 || mask.data[b * n + j] != 0);
            });
        r.output.segment(static_cast<Eigen::Index>(at * m * d), static_cast<Eigen::Index>(m * d)) = one.output;
        r.weights.segment(static_cast<Eigen::Index>(at * m * n), static_cast<Eigen::Index>(m * n)) = one.weights;
      }
    return r;
  }

  std::size_t layers() const { return length_.size(); }
  std::size_t batch() const { return batch_; }
  std::size_t kv_heads() const { return heads_; }
  std::size_t max_len() const { return max_len_; }
  std::size_t head_dim() const { return head_dim_; }
  /// Filled positions of `layer`; index_error for a bad layer.
  std::size_t length(std::size_t layer) const {
    check_layer(layer, "length");
    return length_[layer];
  }
  /// Views of positions [0, length(layer)) of every row and kv head.
  beam_view keys(std::size_t layer) const { return view(layer, &row_block::k); }
  beam_view values(std::size_t layer) const { return view(layer, &row_block::v); }

  /// Bytes of K and V storage, all reserved up front: 2 L B H T D sizeof(double), or in the formats'
  /// bytes (docs/numerics.md §6.3).
  std::size_t bytes() const { return row_bytes() * batch_; }
  /// What one position of one row costs across every layer: 2 L H D sizeof(double) (the formats'
  /// bytes of a whole row over T).
  std::size_t bytes_per_token() const { return row_bytes() / max_len_; }
  /// The per-tensor scales of a scaled element format (docs/numerics.md §6.1).
  void set_scales(double k_scale, double v_scale) requires(storage::keys.scaled || storage::values.scaled) {
    for (auto& r : rows_) r->ks.set_scale(k_scale), r->vs.set_scale(v_scale);
  }
  /// Integer groups: the scales and minima of row b, kv head h of `layer`, in order (docs/numerics.md §6.2).
  Eigen::MatrixXd key_scales(std::size_t layer, std::size_t b, std::size_t h) const requires groups {
    return exposed(layer, b, h, true, false);
  }
  Eigen::MatrixXd key_zeros(std::size_t layer, std::size_t b, std::size_t h) const requires groups {
    return exposed(layer, b, h, true, true);
  }
  Eigen::MatrixXd value_scales(std::size_t layer, std::size_t b, std::size_t h) const requires groups {
    return exposed(layer, b, h, false, false);
  }
  Eigen::MatrixXd value_zeros(std::size_t layer, std::size_t b, std::size_t h) const requires groups {
    return exposed(layer, b, h, false, true);
  }
  /// The largest B x T whose storage fits `budget` bytes (sizing a batch against device memory).
  std::size_t max_batch_tokens(std::size_t budget) const { return budget / bytes_per_token(); }

 private:
  struct row_block {
    row_block(std::size_t n, std::size_t slots, std::size_t heads, std::size_t d)
        : k(n), v(n), ks(storage::keys, slots, d, 1), vs(storage::values, slots, d, 1), kst(heads), vst(heads) {}
    /// A repeated beam's copy: each head's positions written so far, the rest left untouched (a big cache's
    /// copy would otherwise touch all of its max_len).
    row_block(const row_block& o)
        : k(o.k.size()), v(o.v.size()), ks(o.ks), vs(o.vs), kst(o.kst), vst(o.vst), written(o.written) {
      const auto per_head = static_cast<std::ptrdiff_t>(k.size() / kst.size());
      for (std::ptrdiff_t at = 0; at < static_cast<std::ptrdiff_t>(k.size()); at += per_head) {
        std::copy_n(o.k.begin() + at, written, k.begin() + at);
        std::copy_n(o.v.begin() + at, written, v.begin() + at);
      }
    }
    std::vector<double, untouched_allocator<double>> k, v;  // (H, T, D) each
    side ks, vs;                                            // codes and scales of slot h T + t
    std::vector<stream_state> kst, vst;                     // per kv head
    std::size_t written = 0;                                // elements of each head written (positions x D)
  };
  std::size_t row_bytes() const {
    if constexpr (!formats) return 2 * max_len_ * layers() * heads_ * head_dim_ * sizeof(double);
    const row_block& r = *rows_.front();
    return layers() * heads_ * (r.ks.bytes(max_len_) + r.vs.bytes(max_len_));
  }
  /// Writes positions [start, start + n) of row b in the formats, after rolling each head back to start.
  void write_formats(row_block& r, const array_view& k, const array_view& v, std::size_t b, std::size_t start,
                     std::size_t n) {
    for (std::size_t h = 0; h < heads_; ++h)
      for (auto [s, st, m, in] :
           {std::tuple{&r.ks, &r.kst[h], &r.k, k.data}, std::tuple{&r.vs, &r.vst[h], &r.v, v.data}}) {
        s->truncate(*st, start);
        for (std::size_t t = 0; t < n; ++t) {
          const std::size_t slot = h * max_len_ + start + t;
          s->append(*st, slot, in + ((b * heads_ + h) * n + t) * head_dim_, m->data() + slot * head_dim_, t + 1 == n,
                    [&, m = m](std::size_t i) {
                      return typename side::row_at{h * max_len_ + i, m->data() + (h * max_len_ + i) * head_dim_};
                    });
        }
      }
  }
  Eigen::MatrixXd exposed(std::size_t layer, std::size_t b, std::size_t h, bool keys, bool zeros) const {
    check_layer(layer, "scales");
    const row_block& r = *rows_[layer * batch_ + b];
    return group_matrix(
        keys ? r.ks : r.vs, keys ? r.kst[h] : r.vst[h], 0, length_[layer],
        [&](std::size_t i) { return h * max_len_ + i; }, zeros);
  }
  std::size_t block_size() const { return heads_ * max_len_ * head_dim_; }
  void check_layer(std::size_t layer, const char* what) const {
    if (layer >= layers()) throw index_error(std::string(what) + ": layer out of range");
  }
  bool is_block(const array_view& a) const {
    return a.rank == 4 && a.dims[0] == batch_ && a.dims[1] == heads_ && a.dims[3] == head_dim_;
  }
  beam_view view(std::size_t layer, std::vector<double, untouched_allocator<double>> row_block::*part) const {
    check_layer(layer, "view");
    std::vector<const double*> rows;
    for (std::size_t b = 0; b < batch_; ++b) rows.push_back(((*rows_[layer * batch_ + b]).*part).data());
    return {std::move(rows), heads_, max_len_, length_[layer], head_dim_};
  }

  std::size_t batch_, heads_, max_len_, head_dim_;
  std::vector<std::size_t> length_;               // per layer
  std::vector<std::shared_ptr<row_block>> rows_;  // (layer, row) at layer * B + row
};

using beam = basic_beam<>;
/// The beam reference storing keys in K and values in V (impls/common/formats.h).
template <storage_format K, storage_format V = K, class Rules = storage_rules>
using beam_stored = stored<basic_beam, beam_rules, K, V, Rules>;

}  // namespace kvconform
