// acme's multi-head latent attention cache (kvconform kind latent): one [c ; k_r] row per token in a block pool.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "acme_support.h"
#include "block_pool.h"

namespace acme {

struct latent_sequence {
  std::vector<std::size_t> blocks;
  std::size_t len = 0;
};

/// A sequence's value rows are its stored rows cut to their first d_c entries, read where the rows lie:
/// docs/kinds/latent.md asks for the same storage, not a copy that could drift from the keys.
struct latent_value_view {
  block_view rows_of;
  std::size_t d_c;
  std::ptrdiff_t rows() const { return rows_of.rows(); }
  std::ptrdiff_t cols() const { return static_cast<std::ptrdiff_t>(d_c); }
  double operator()(std::ptrdiff_t i, std::ptrdiff_t j) const { return rows_of(i, j); }
};

/// acme's block pool (block_pool.h: fork shares, copy-on-write of a shared, partly filled last block) holding rows
/// of width d_k = d_c + d_r. The pool is built with no value storage (d_v 0 for the base), since a row's value is its
/// own latent part: there is nothing else to store or to copy on write. Every refusal is decided before the first
/// change, so a refused call changes nothing. The decode absorbs the up-projections (FlashMLA's order), so a head
/// never materialises its keys or values.
class latent_cache : public block_pool<latent_sequence> {
 public:
  static constexpr kvconform::numeric_profile profile{.latent = kvconform::latent_path::absorbed};

  /// d_v is the latent width d_c; the rows' last d_k - d_v entries are the rotary part.
  latent_cache(std::size_t num_blocks, std::size_t block_size, std::size_t d_k, std::size_t d_v)
      : block_pool(num_blocks, block_size, d_k, 0), dc_(d_v) {}

  /// Never refused: a new sequence holds no block until it is written.
  sequence_id create() {
    seqs_[next_] = {};
    return next_++;
  }

  status release(sequence_id s) {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return status(code::no_such);
    drop_blocks(it->second, 0);
    seqs_.erase(it);
    return {};
  }

  /// k alone: the row carries the value too (docs/kinds/latent.md has no v for this kind).
  status append(sequence_id s, kvconform::array_view k) {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return status(code::no_such);
    const auto n = rows_in(k);
    if (!n || n->width != dk_) return status(code::bad_shape);
    if (n->steps == 0) return {};
    latent_sequence& q = it->second;
    if (blocks_needed(q, n->steps) > free_.size()) return status(code::full);
    if (must_copy(q)) copy_last_block(q, take());
    for (std::size_t i = 0; i < n->steps; ++i) {
      if (q.len % bs_ == 0) q.blocks.push_back(take());
      std::copy_n(k.data + i * dk_, dk_, keys_.data() + (q.blocks.back() * bs_ + q.len % bs_) * dk_);
      ++q.len;
    }
    return {};
  }

  /// A kept, partly filled block keeps its rows past the new end: a sibling may still read them, and the next append
  /// into a shared one copies it first (docs/kinds/paged.md, Rollback).
  status rollback(sequence_id s, std::size_t n) {
    const auto it = seqs_.find(s);
    if (it == seqs_.end() || n > it->second.len) return status(code::no_such);
    latent_sequence& q = it->second;
    q.len -= n;
    drop_blocks(q, (q.len + bs_ - 1) / bs_);
    return {};
  }

  latent_value_view values(sequence_id s) const { return {keys(s), dc_}; }

  /// q (Hq, d_nope + d_r), w_uk (Hq, d_nope, d_c), w_uv (Hq, d_vh, d_c); gives every head's output (Hq, d_vh) and
  /// weights (Hq, n), head after head.
  result<decoded> decode_step(sequence_id s, kvconform::array_view q, kvconform::array_view w_uk,
                              kvconform::array_view w_uv) const {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return code::no_such;
    const auto h = shape_of(q, 2, w_uk, w_uv);
    if (!h) return code::bad_shape;
    const std::size_t n = it->second.len;
    if (n == 0) return code::empty;
    decoded all;
    attend_heads(s, *h, q.data, w_uk, w_uv, n, n, all);
    return all;
  }

  /// k (m, d_k) appended as append does, then step i's heads q[i] (q (m, Hq, d_nope + d_r), the decode's projections)
  /// decoded over the rows up to its own: output (m, Hq, d_vh) and weights (m, Hq, n + m), 0 past a step's own row
  /// (docs/kinds/latent.md, Ops and refusals). Refused as the append, or for shapes, before anything is written.
  result<decoded> prefill(sequence_id s, kvconform::array_view k, kvconform::array_view q, kvconform::array_view w_uk,
                          kvconform::array_view w_uv) {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return code::no_such;
    const auto h = shape_of(q, 3, w_uk, w_uv);
    if (k.rank != 2 || k.dims[1] != dk_ || !h || q.dims[0] != k.dims[0]) return code::bad_shape;
    const std::size_t before = it->second.len, m = k.dims[0];
    if (const status appended = append(s, k); !appended.ok()) return appended.why();
    decoded all;
    for (std::size_t i = 0; i < m; ++i)
      attend_heads(s, *h, q.data + i * h->count * q.dims[2], w_uk, w_uv, before + i + 1, before + m, all);
    return all;
  }

  /// Only blocks handed out count, and each holds rows of d_k doubles: no value storage.
  std::size_t bytes_in_use() const { return (num_blocks() - free_blocks()) * bs_ * dk_ * sizeof(double); }

 private:
  struct heads {
    std::size_t count, d_nope, d_vh;
  };
  /// The heads of q (rank 2: a decode's (Hq, d_nope + d_r); rank 3: a prefill's (m, Hq, d_nope + d_r)) and its
  /// projections when they agree with each other and the rows; a decode with no head, no q_nope or no output width
  /// is a shape error too (docs/kinds/latent.md, Contract).
  std::optional<heads> shape_of(kvconform::array_view q, std::size_t rank, kvconform::array_view w_uk,
                                kvconform::array_view w_uv) const {
    if (q.rank != rank || w_uk.rank != 3 || w_uv.rank != 3) return std::nullopt;
    const heads h{q.dims[rank - 2], w_uk.dims[1], w_uv.dims[1]};
    if (h.count == 0 || h.d_nope == 0 || h.d_vh == 0 || w_uk.dims[0] != h.count || w_uv.dims[0] != h.count ||
        w_uk.dims[2] != dc_ || w_uv.dims[2] != dc_ || q.dims[rank - 1] != h.d_nope + dk_ - dc_)
      return std::nullopt;
    return h;
  }
  /// Every head of qs (Hq rows of d_nope + d_r) over s's first `seen` rows, appended to `all`: outputs of d_vh, weights
  /// of `width` (0 past `seen`). Absorbed: q~ = W_uk^T q_nope is attended over the rows as they are, with the head's
  /// own scale 1/sqrt(d_nope + d_r) rather than the row width's, and W_uv is applied to the latent average.
  void attend_heads(sequence_id s, const heads& h, const double* qs, kvconform::array_view w_uk,
                    kvconform::array_view w_uv, std::size_t seen, std::size_t width, decoded& all) const {
    const std::size_t dr = dk_ - dc_;
    const block_view k = keys(s);
    const double scale = 1.0 / std::sqrt(static_cast<double>(h.d_nope + dr));
    std::vector<double> absorbed(dk_);
    for (std::size_t x = 0; x < h.count; ++x) {
      const double* qh = qs + x * (h.d_nope + dr);
      const double* uk = w_uk.data + x * h.d_nope * dc_;
      std::fill(absorbed.begin(), absorbed.begin() + static_cast<std::ptrdiff_t>(dc_), 0.0);
      for (std::size_t j = 0; j < h.d_nope; ++j)
        for (std::size_t c = 0; c < dc_; ++c) absorbed[c] += uk[j * dc_ + c] * qh[j];
      std::copy_n(qh + h.d_nope, dr, absorbed.begin() + static_cast<std::ptrdiff_t>(dc_));
      // A row's first d_c entries are its value, so the latent average is attention with d_v = d_c over the rows.
      const auto row = [&](std::size_t i) { return k.row(i); };
      const decoded head =
          attend_scaled(seen, dk_, dc_, absorbed.data(), scale, row, row, [](std::size_t) { return true; });
      const double* uv = w_uv.data + x * h.d_vh * dc_;
      for (std::size_t r = 0; r < h.d_vh; ++r) {
        double o = 0;
        for (std::size_t c = 0; c < dc_; ++c) o += uv[r * dc_ + c] * head.output[c];
        all.output.push_back(o);
      }
      all.weights.insert(all.weights.end(), head.weights.begin(), head.weights.end());
      all.weights.resize(all.weights.size() + (width - seen), 0.0);
    }
  }
  /// Callers have checked that enough blocks are free.
  std::size_t take() {
    const std::size_t b = free_.back();
    free_.pop_back();
    refs_[b] = 1;
    return b;
  }
  /// The last block first, as docs/kinds/paged.md's rollback gives them up; a block another table holds stays held.
  void drop_blocks(latent_sequence& q, std::size_t keep) {
    for (; q.blocks.size() > keep; q.blocks.pop_back())
      if (--refs_[q.blocks.back()] == 0) free_.push_back(q.blocks.back());
  }

  std::size_t dc_;
};

}  // namespace acme
