// acme's hybrid cache: sliding and global layers, KV-shared layers and a cross-attention layer over one block pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <kvconform/hybrid.h>
#include "acme_support.h"

namespace acme {

/// Rows copied out for a look: rows(), cols() and (i, j) are all kvconform asks of a view.
struct row_copy {
  std::vector<double> data;
  std::size_t n = 0, width = 1;
  std::ptrdiff_t rows() const { return static_cast<std::ptrdiff_t>(n); }
  std::ptrdiff_t cols() const { return static_cast<std::ptrdiff_t>(width); }
  double operator()(std::ptrdiff_t i, std::ptrdiff_t j) const { return data[static_cast<std::size_t>(i) * width + j]; }
};

/// Blocks are numbered 0 .. num_blocks - 1 and hold, per row, one key and one value per layer of the group that
/// took them (acme keeps them in a map: a block is only ever written by one group at a time). Group 0 is global,
/// 1 sliding, 2 cross; kNone marks a table entry the window has passed.
class hybrid_cache {
  static constexpr std::size_t kNone = SIZE_MAX;
  struct layer {
    std::size_t group, place;  // the group whose rows it reads, and its producer's place among the group's writers
    bool writes;
  };
  struct sequence {
    std::size_t len = 0;
    std::vector<std::size_t> table[3];
  };
  struct block {
    std::size_t refs = 0, group = 0;
    std::map<std::size_t, std::vector<double>> k, v;  // by row * layers + place
  };

 public:
  using sequence_id = std::uint32_t;

  hybrid_cache(std::size_t num_blocks, std::size_t block_size, std::size_t d_k, std::size_t d_v,
               kvconform::hybrid_layers l)
      : bs_(block_size), dk_(d_k), dv_(d_v), shape_(l), blocks_(num_blocks) {
    // A layer is global when there is no window or it is every global_every-th; the last `shared` read the last
    // writer of their own pattern type (else the last writer), as docs/kinds/hybrid.md says.
    auto global = [&](std::size_t i) { return l.window == 0 || (l.global_every && (i + 1) % l.global_every == 0); };
    const std::size_t writers = l.layers - l.shared;
    std::size_t places[2] = {0, 0};
    for (std::size_t i = 0; i < l.layers; ++i) {
      const std::size_t g = global(i) ? 0 : 1;
      if (i < writers) {
        layers_.push_back({g, places[g]++, true});
        continue;
      }
      std::size_t from = writers - 1;
      for (std::size_t j = 0; j < writers; ++j)
        if (layers_[j].group == g) from = j;
      layers_.push_back({layers_[from].group, layers_[from].place, false});
    }
    if (l.cross > 0) layers_.push_back({2, 0, false});
    width_ = std::max<std::size_t>({places[0], places[1], 1});
    for (std::size_t b = num_blocks; b > 0; --b) free_.push_back(b - 1);
  }

  result<sequence_id> create(kvconform::array_view k, kvconform::array_view v) {
    const std::size_t e = shape_.cross, need = (e + bs_ - 1) / bs_;
    if (k.rank != 2 || v.rank != 2 || k.dims[0] != e || v.dims[0] != e || k.dims[1] != dk_ || v.dims[1] != dv_)
      return code::bad_shape;
    if (need > free_.size()) return code::full;
    sequence s;
    for (std::size_t j = 0; j < need; ++j) s.table[2].push_back(take(2));
    for (std::size_t p = 0; p < e; ++p) put(s.table[2][p / bs_], p % bs_, 0, k.data + p * dk_, v.data + p * dv_);
    seqs_[next_] = s;
    return next_++;
  }

  std::optional<sequence_id> fork(sequence_id id) {
    const auto it = seqs_.find(id);
    if (it == seqs_.end()) return std::nullopt;
    for (const auto& t : it->second.table)
      for (std::size_t b : t)
        if (b != kNone) ++blocks_[b].refs;
    seqs_[next_] = it->second;
    return next_++;
  }

  status release(sequence_id id) {
    const auto it = seqs_.find(id);
    if (it == seqs_.end()) return status(code::no_such);
    for (const auto& t : it->second.table)
      for (std::size_t b : t)
        if (b != kNone) drop(b);
    seqs_.erase(it);
    return {};
  }

  status append(sequence_id id, kvconform::array_view k, kvconform::array_view v) { return extend(id, k, v, false); }

  /// The append, with q (layers, n, d_k): the query of layer l and step i reads what l reads at row len + i, so a
  /// sliding layer keeps the rows its early queries read until they have, then gives back what the window passed.
  result<decoded> prefill(sequence_id id, kvconform::array_view k, kvconform::array_view v, kvconform::array_view q) {
    const auto it = seqs_.find(id);
    if (it == seqs_.end()) return code::no_such;
    const std::size_t n = k.rank == 3 ? k.dims[1] : 0, len = it->second.len, span = shape_.window - shape_.keep;
    if (q.rank != 3 || q.dims[0] != layers_.size() || q.dims[1] != n || q.dims[2] != dk_) return code::bad_shape;
    if (const status done = extend(id, k, v, true); !done.ok()) return done.why();
    const sequence& s = it->second;
    decoded out;
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      const layer& x = layers_[l];
      const bool slides = x.group == 1, cross = x.group == 2;
      std::vector<std::size_t> at;  // what l read before, then the new rows
      for (std::size_t p = 0; p < (cross ? shape_.cross : len); ++p)
        if (!slides || p < shape_.keep || p + span >= len) at.push_back(p);
      for (std::size_t p = len; !cross && p < len + n; ++p) at.push_back(p);
      auto row = [&](std::size_t j, bool keys) {
        const block& b = blocks_[s.table[x.group][at[j] / bs_]];
        return (keys ? b.k : b.v).at(at[j] % bs_ * width_ + x.place).data();
      };
      for (std::size_t i = 0; i < n; ++i) {
        const decoded d = attend(
            at.size(), dk_, dv_, q.data + (l * n + i) * dk_, [&](std::size_t j) { return row(j, true); },
            [&](std::size_t j) { return row(j, false); },
            [&](std::size_t j) {
              return cross || (at[j] <= len + i && (!slides || at[j] < shape_.keep || at[j] + span > len + i));
            });
        out.output.insert(out.output.end(), d.output.begin(), d.output.end());
        out.weights.insert(out.weights.end(), d.weights.begin(), d.weights.end());
      }
    }
    sequence& mine = it->second;
    for (std::size_t j = 0; j < mine.table[1].size(); ++j)  // what the window passed, now that the queries read it
      if (mine.table[1][j] != kNone && !wants(1, j, mine.len)) drop(mine.table[1][j]), mine.table[1][j] = kNone;
    return out;
  }

 private:
  status extend(sequence_id id, kvconform::array_view k, kvconform::array_view v, bool prefill) {
    const auto it = seqs_.find(id);
    if (it == seqs_.end()) return status(code::no_such);
    const std::size_t w = shape_.layers - shape_.shared;
    if (k.rank != 3 || v.rank != 3 || k.dims[0] != w || v.dims[0] != w || k.dims[1] != v.dims[1] || k.dims[2] != dk_ ||
        v.dims[2] != dv_)
      return status(code::bad_shape);
    sequence& s = it->second;
    const std::size_t n = k.dims[1], to = s.len + n, count = (to + bs_ - 1) / bs_, at = prefill ? s.len + 1 : to;
    if (n == 0) return {};
    // What each group gives back, copies and lacks at the new length, before anything moves.
    std::size_t need = 0, gives = 0;
    std::vector<std::size_t> drops[2], takes[2];
    bool copy[2] = {false, false};
    for (std::size_t g = 0; g < 2; ++g) {
      if (!has_writers(g)) continue;
      const auto& t = s.table[g];
      for (std::size_t j = 0; j < count; ++j) {
        const bool held = j < t.size() && t[j] != kNone, wanted = wants(g, j, at);
        if (held && !wanted) drops[g].push_back(j), gives += blocks_[t[j]].refs == 1;
        if (!held && wanted) takes[g].push_back(j), ++need;
      }
      const std::size_t last = s.len / bs_;
      copy[g] = s.len % bs_ && wants(g, last, at) && t[last] != kNone && blocks_[t[last]].refs > 1;
      need += copy[g];
    }
    if (need > free_.size() + gives) return status(code::full);
    for (std::size_t g = 0; g < 2; ++g)
      for (std::size_t j : drops[g]) drop(s.table[g][j]), s.table[g][j] = kNone;
    for (std::size_t g = 0; g < 2; ++g) {
      if (!has_writers(g)) continue;
      s.table[g].resize(count, kNone);
      if (copy[g]) {
        std::size_t& b = s.table[g][s.len / bs_];
        const std::size_t own = take(g);
        blocks_[own].k = blocks_[b].k, blocks_[own].v = blocks_[b].v;
        drop(b), b = own;
      }
      for (std::size_t j : takes[g]) s.table[g][j] = take(g);
    }
    for (std::size_t i = 0, wi = 0; i < layers_.size(); ++i) {
      const layer& x = layers_[i];
      if (!x.writes) continue;
      for (std::size_t step = 0, p = s.len; step < n; ++step, ++p)
        if (const std::size_t b = s.table[x.group][p / bs_]; b != kNone)  // rows the window has passed are not kept
          put(b, p % bs_, x.place, k.data + (wi * n + step) * dk_, v.data + (wi * n + step) * dv_);
      ++wi;
    }
    s.len = to;
    return {};
  }

 public:
  result<decoded> decode_step(sequence_id id, std::size_t l, kvconform::array_view q) const {
    if (!seqs_.count(id) || l >= layers_.size()) return code::no_such;
    if (q.rank != 1 || q.dims[0] != dk_) return code::bad_shape;
    const row_copy k = keys(id, l), v = values(id, l);
    if (k.n == 0) return code::empty;
    return attend(
        k.n, dk_, dv_, q.data, [&](std::size_t i) { return k.data.data() + i * dk_; },
        [&](std::size_t i) { return v.data.data() + i * dv_; });
  }

  row_copy keys(sequence_id id, std::size_t l) const { return gather(id, l, true); }
  row_copy values(sequence_id id, std::size_t l) const { return gather(id, l, false); }
  std::vector<std::size_t> block_table(sequence_id id, std::size_t l) const {
    std::vector<std::size_t> out;
    const auto it = seqs_.find(id);
    if (it == seqs_.end() || l >= layers_.size() || (!layers_[l].writes && layers_[l].group != 2)) return out;
    for (std::size_t b : it->second.table[layers_[l].group])
      if (b != kNone) out.push_back(b);
    return out;
  }
  std::size_t num_blocks() const { return blocks_.size(); }
  std::size_t free_blocks() const { return free_.size(); }
  std::size_t ref_count(std::size_t b) const { return b < blocks_.size() ? blocks_[b].refs : 0; }
  std::size_t group_blocks(kvconform::hybrid_group g) const {
    std::size_t n = 0;
    for (const block& b : blocks_) n += b.refs > 0 && b.group == static_cast<std::size_t>(g);
    return n;
  }

 private:
  bool has_writers(std::size_t g) const {
    for (const layer& x : layers_)
      if (x.writes && x.group == g) return true;
    return false;
  }
  /// Whether group g of a sequence of n rows still needs its block j: every block, but for the sliding group only
  /// those holding a sink or one of the last window - keep rows.
  bool wants(std::size_t g, std::size_t j, std::size_t n) const {
    return g != 1 || j * bs_ < shape_.keep || (j + 1) * bs_ + shape_.window - shape_.keep > n;
  }
  std::size_t take(std::size_t g) {
    const std::size_t b = free_.back();
    free_.pop_back();
    blocks_[b] = {1, g, {}, {}};
    return b;
  }
  void drop(std::size_t b) {
    if (--blocks_[b].refs == 0) blocks_[b].k.clear(), blocks_[b].v.clear(), free_.push_back(b);
  }
  void put(std::size_t b, std::size_t row, std::size_t place, const double* k, const double* v) {
    auto& keys = blocks_[b].k[row * width_ + place];
    auto& values = blocks_[b].v[row * width_ + place];
    keys.clear(), values.clear();
    for (std::size_t j = 0; j < dk_; ++j) keys.push_back(stored(blocks_[b].group, k[j]));
    for (std::size_t j = 0; j < dv_; ++j) values.push_back(stored(blocks_[b].group, v[j]));
  }
  row_copy gather(sequence_id id, std::size_t l, bool keys) const {
    row_copy out{{}, 0, keys ? dk_ : dv_};
    const auto it = seqs_.find(id);
    if (it == seqs_.end() || l >= layers_.size()) return out;
    const layer& x = layers_[l];
    const std::size_t n = x.group == 2 ? shape_.cross : it->second.len, span = shape_.window - shape_.keep;
    for (std::size_t p = 0; p < n; ++p) {
      if (x.group == 1 && p >= shape_.keep && p + span < n) continue;  // outside the window
      const block& b = blocks_[it->second.table[x.group][p / bs_]];
      const auto& row = (keys ? b.k : b.v).at(p % bs_ * width_ + x.place);
      out.data.insert(out.data.end(), row.begin(), row.end()), ++out.n;
    }
    return out;
  }

 protected:
  /// What a block of `group` keeps of a value: all of it here (a narrower group overrides this).
  virtual double stored(std::size_t group, double x) const {
    (void)group;
    return x;
  }

 private:
  std::size_t bs_, dk_, dv_, width_ = 1;
  kvconform::hybrid_layers shape_;
  std::vector<layer> layers_;
  std::vector<block> blocks_;
  std::vector<std::size_t> free_;
  std::map<sequence_id, sequence> seqs_;
  sequence_id next_ = 0;
};

/// acme's hybrid cache keeping its sliding layers in IEEE fp16 (a format per layer group, as vLLM allows), declared so:
/// a block keeps the format of the group that takes it now, whichever group held it before.
struct half_sliding_hybrid : hybrid_cache {
  using hybrid_cache::hybrid_cache;
  static constexpr kvconform::numeric_profile profile{.sliding_keys = kvconform::formats::fp16,
                                                      .sliding_values = kvconform::formats::fp16};

 protected:
  double stored(std::size_t group, double x) const override {
    return group == 1 ? static_cast<double>(static_cast<_Float16>(x)) : x;  // the compiler's conversion rounds to even
  }
};

}  // namespace acme
