// The reference hybrid KV cache: full, sliding, shared and cross-attention layers over one block pool.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include <kvconform/hybrid.h>
#include "impls/common/attention.h"
#include "impls/common/row_storage.h"
#include "impls/common/sequences.h"
#include "impls/hybrid/layout.h"
#include "impls/hybrid/prefix_index.h"
#include "impls/hybrid/rules.h"
#include "impls/paged/paged.h"

namespace kvconform {

/// One pool of num_blocks blocks for every layer group. A sequence holds a block table per group: the full
/// group's covers every row, the sliding group's only the blocks its window still reads (the others go back to
/// the pool as the window passes them), the cross group's the encoder rows written at create. A block holds
/// block_size positions of every writing layer of the group that took it. Fork shares every table; an append
/// into a shared, partly filled last block copies it first. Refusals throw and change nothing.
template <class Rules = hybrid_rules>
class basic_hybrid {
  using storage = typename Rules::storage;
  using sliding_storage = typename sliding_storage_of<Rules>::type;
  using side = side_storage<typename storage::rules>;
  static_assert(!storage::keys.groups && !storage::values.groups && !sliding_storage::keys.groups &&
                    !sliding_storage::values.groups,
                "a hybrid cache stores element formats");
  static_assert(std::is_same_v<typename storage::rules, typename sliding_storage::rules>);

 public:
  using seq_id = std::size_t;
  using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  /// With `prefix_caching`, a create reuses the blocks live sequences hold for the longest prefix of its tokens.
  basic_hybrid(std::size_t num_blocks, std::size_t block_size, std::size_t d_k, std::size_t d_v, hybrid_layers l,
               bool prefix_caching = false)
      : shape_(l),
        layers_(resolve_layers(l)),
        bs_(block_size),
        d_k_(d_k),
        d_v_(d_v),
        refs_(num_blocks, 0),
        owner_(num_blocks, hybrid_group::full),
        layout_(num_blocks, 0),
        format_(num_blocks, hybrid_group::full),
        ks_{side(storage::keys, 0, d_k, 1), side(sliding_storage::keys, 0, d_k, 1)},
        vs_{side(storage::values, 0, d_v, 1), side(sliding_storage::values, 0, d_v, 1)},
        prefix_(prefix_caching) {
    if (block_size == 0 || d_k == 0 || d_v == 0) throw shape_error("hybrid: block_size, d_k and d_v must be positive");
    for (std::size_t g = 0; g < hybrid_groups; ++g) width_[g] = group_width(layers_, static_cast<hybrid_group>(g));
    stride_ = std::max({width_[0], width_[1], std::size_t{1}});
    k_.setConstant(static_cast<Eigen::Index>(num_blocks * bs_ * stride_), static_cast<Eigen::Index>(d_k), nan());
    v_.setConstant(static_cast<Eigen::Index>(num_blocks * bs_ * stride_), static_cast<Eigen::Index>(d_v), nan());
    for (std::size_t b = num_blocks; b > 0; --b) free_.push_back(b - 1);
  }

  /// A new sequence with the encoder's rows (cross, d_k) and (cross, d_v) (0 rows: none) in its cross layer, or
  /// shape_error, capacity_error. With prefix caching it holds the longest prefix of `prompt` every group holds.
  seq_id create(array_view enc_k, array_view enc_v, std::span<const std::int64_t> prompt = {}) {
    const std::size_t e = shape_.cross;
    if (enc_k.rank != 2 || enc_v.rank != 2 || enc_k.dims[0] != e || enc_v.dims[0] != e || enc_k.dims[1] != d_k_ ||
        enc_v.dims[1] != d_v_)
      throw shape_error("create: encoder rows must be (cross, d_k) and (cross, d_v)");
    const std::size_t need = (e + bs_ - 1) / bs_;
    if (need > free_.size()) throw capacity_error("create: block pool exhausted");
    sequence s;
    for (std::size_t b : Rules::take(free_, need))
      s.tables[group(hybrid_group::cross)].push_back(hold(b, hybrid_group::cross));
    for (std::size_t p = 0; p < e; ++p)
      write(s, hybrid_group::cross, 0, p, enc_k.data + p * d_k_, enc_v.data + p * d_v_);
    if (prefix_) hit(s, prompt);
    seqs_.emplace(next_, std::move(s));
    return next_++;
  }

  /// A new sequence sharing every block of s.
  seq_id fork(seq_id s) {
    const sequence& from = find(s);
    for (const auto& t : from.tables)
      for (std::ptrdiff_t b : t)
        if (b >= 0) ++refs_[static_cast<std::size_t>(b)];
    seqs_.emplace(next_, from);
    return next_++;
  }

  void release(seq_id s) {
    const auto it = find_sequence(seqs_, s, "hybrid");
    for (const auto& t : it->second.tables)
      for (std::ptrdiff_t b : t)
        if (b >= 0) unref(static_cast<std::size_t>(b));
    seqs_.erase(it);
  }

  /// Appends n steps to every writing layer of s: k (writing layers, n, d_k) and v likewise, the writing layers in
  /// order; n = 0 is a no-op. index_error, shape_error, capacity_error when the pool lacks the blocks it needs.
  void append(seq_id s, array_view k, array_view v, std::span<const std::int64_t> tokens = {}) {
    extend(find(s), k, v, tokens, false);
  }

  /// An append whose q (layers, n, d_k) holds each layer's query of each step, and `sinks` each layer's logit when
  /// declared: output (layers, n, d_v), weights per layer and step (docs/kinds/hybrid.md). Refused as append, or shape.
  decode_result prefill(seq_id s, array_view k, array_view v, array_view q, std::span<const std::int64_t> tokens = {},
                        array_view sinks = {}) {
    sequence& sq = find(s);
    if (q.rank != 3 || q.dims[0] != layers_.size() || (k.rank == 3 && q.dims[1] != k.dims[1]) || q.dims[2] != d_k_)
      throw shape_error("prefill: q must be (layers, n, d_k)");
    for (std::size_t l = 0; l < layers_.size(); ++l) layer_terms<Rules>(sinks, layers_, l, true);  // before any change
    const std::size_t before = sq.len;
    std::vector<std::vector<std::size_t>> rows;  // per layer: the positions its queries may read
    for (const hybrid_layer& x : layers_) rows.push_back(positions(sq, x, before, k.rank == 3 ? k.dims[1] : 0));
    extend(sq, k, v, tokens, true);
    const std::size_t n = sq.len - before, W = shape_.window, keep = shape_.keep;
    decode_result r{Eigen::VectorXd::Zero(static_cast<Eigen::Index>(layers_.size() * n * d_v_)), {}};
    std::vector<double> weights;
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      const hybrid_layer& x = layers_[l];
      const std::vector<std::size_t>& at = rows[l];
      const bool windowed = Rules::windowed(x.group) && W > 0, cross = x.group == hybrid_group::cross;
      const decode_result one = attend_causal(
          n, at.size(), d_k_, d_v_, q.data + l * n * d_k_,
          [&](std::size_t j) { return k_.data() + pool_row(sq, x, at[j]) * k_.cols(); },
          [&](std::size_t j) { return v_.data() + pool_row(sq, x, at[j]) * v_.cols(); },
          [&](std::size_t i, std::size_t j) {
            const std::size_t p = at[j], last = Rules::window_per_query ? before + i : sq.len - 1;
            return cross || (p <= before + i && (!windowed || p < keep || p + (W - keep) > last));
          },
          layer_terms<Rules>(sinks, layers_, l, true));
      r.output.segment(static_cast<Eigen::Index>(l * n * d_v_), static_cast<Eigen::Index>(n * d_v_)) = one.output;
      weights.insert(weights.end(), one.weights.begin(), one.weights.end());
    }
    r.weights = Eigen::Map<const Eigen::VectorXd>(weights.data(), static_cast<Eigen::Index>(weights.size()));
    if (!Rules::next_step) drop_passed(sq, sq.len);  // what the queries read, passed now (else at the next step)
    return r;
  }

  /// One decode over the rows layer `layer` of s reads (with its sink logit when declared). index_error, shape_error
  /// (q not 1-D of width d_k, sinks), empty_error.
  decode_result decode_step(seq_id s, std::size_t layer, array_view q, array_view sinks = {}) const {
    const sequence& sq = find(s);
    if (layer >= layers_.size()) throw index_error("decode_step: no such layer");
    if (q.rank != 1 || q.dims[0] != d_k_) throw shape_error("decode_step: q must be 1-D of width d_k");
    const score_terms t = layer_terms<Rules>(sinks, layers_, layer, false);
    const std::vector<Eigen::Index> rows = read_rows(sq, layers_[layer]);
    if (rows.empty()) throw empty_error("decode_step: the layer holds no rows");
    return attend(
        rows.size(), d_k_, d_v_, q.data, [&](std::size_t i) { return k_.data() + rows[i] * k_.cols(); },
        [&](std::size_t i) { return v_.data() + rows[i] * v_.cols(); }, [](std::size_t) { return true; }, t);
  }

  /// Copies of the rows layer `layer` of s reads, in order.
  row_matrix keys(seq_id s, std::size_t layer) const { return gather(k_, find(s), layer); }
  row_matrix values(seq_id s, std::size_t layer) const { return gather(v_, find(s), layer); }
  /// The blocks s holds for the group layer `layer` writes into, in row order; none for a shared layer.
  std::vector<std::size_t> block_table(seq_id s, std::size_t layer) const {
    std::vector<std::size_t> out;
    if (layer >= layers_.size()) throw index_error("block_table: no such layer");
    if (layers_[layer].kind == hybrid_layer::type::shared) return out;
    for (std::ptrdiff_t b : find(s).tables[group(layers_[layer].group)])
      if (b >= 0) out.push_back(static_cast<std::size_t>(b));
    return out;
  }
  /// The per-tensor scales of a scaled element format (docs/numerics.md §6.1).
  void set_scales(double k_scale, double v_scale) requires(storage::keys.scaled || storage::values.scaled ||
                                                           sliding_storage::keys.scaled ||
                                                           sliding_storage::values.scaled) {
    for (side& s : ks_) s.set_scale(k_scale);
    for (side& s : vs_) s.set_scale(v_scale);
  }
  std::size_t size(seq_id s) const { return find(s).len; }
  std::size_t num_blocks() const { return refs_.size(); }
  std::size_t free_blocks() const { return free_.size(); }
  std::size_t ref_count(std::size_t b) const { return refs_.at(b); }
  /// Blocks group g holds (each once, however many tables hold it).
  std::size_t group_blocks(hybrid_group g) const {
    std::size_t n = 0;
    for (std::size_t b = 0; b < refs_.size(); ++b) n += refs_[b] > 0 && owner_[b] == g ? 1 : 0;
    return n;
  }

 private:
  struct sequence {
    std::array<std::vector<std::ptrdiff_t>, hybrid_groups> tables;  // per group, per block of rows: -1 when not held
    std::size_t len = 0;
    std::vector<std::int64_t> tokens;  // with prefix caching
  };
  /// What an append of n rows does to one group's table: the blocks it drops, copies and takes.
  struct plan {
    hybrid_group g;
    std::vector<std::size_t> drop, take;
    bool copy = false;
  };
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }
  static std::size_t group(hybrid_group g) { return static_cast<std::size_t>(g); }
  template <class S>
  static auto& table(S& s, hybrid_group g) {
    return s.tables[group(g)];
  }

  sequence& find(seq_id s) { return find_sequence(seqs_, s, "hybrid")->second; }
  const sequence& find(seq_id s) const { return find_sequence(seqs_, s, "hybrid")->second; }

  /// Appends k and v's steps to q (see append). A prefill plans the sliding group at q's length plus one, the window
  /// of its first query, so that the rows its queries read are held while they attend.
  void extend(sequence& q, array_view k, array_view v, std::span<const std::int64_t> tokens, bool prefill) {
    const std::size_t writers = shape_.layers - shape_.shared;
    if (k.rank != 3 || v.rank != 3 || k.dims[0] != writers || v.dims[0] != writers || k.dims[1] != v.dims[1] ||
        k.dims[2] != d_k_ || v.dims[2] != d_v_)
      throw shape_error("append: k and v must be (writing layers, n, d_k) and (writing layers, n, d_v)");
    const std::size_t n = k.dims[1], from = q.len, at = prefill || Rules::next_step ? q.len + 1 : q.len + n;
    if (prefix_ && tokens.size() != n) throw shape_error("append: one token per step");
    if (n == 0) return;
    std::array<plan, 2> plans{planned(q, hybrid_group::full, n, at), planned(q, hybrid_group::sliding, n, at)};
    std::size_t need = 0, freed = 0;
    for (const plan& p : plans) {
      need += p.take.size() + (p.copy ? 1 : 0);
      for (std::size_t j : p.drop) freed += refs_[static_cast<std::size_t>(table(q, p.g)[j])] == 1 ? 1 : 0;
    }
    if (need > free_.size() + freed) {
      if (Rules::refused_frees) drop_passed(q, q.len + 1);  // the one change a refusal makes, by this policy
      throw capacity_error("append: block pool exhausted");
    }
    for (const plan& p : plans)
      for (std::size_t j : p.drop) unref(static_cast<std::size_t>(std::exchange(table(q, p.g)[j], -1)));
    for (const plan& p : plans) grow(q, p, n);
    for (std::size_t i = 0; i < n; ++i, ++q.len)
      for (std::size_t l = 0; l < layers_.size(); ++l) {
        const hybrid_layer& x = layers_[l];
        if (x.kind == hybrid_layer::type::cross || (x.kind == hybrid_layer::type::shared && !Rules::shared_writes))
          continue;
        // A shared layer that writes puts the next writing layer's rows into its producer's slots.
        const std::size_t w = x.kind == hybrid_layer::type::shared ? (x.written + 1) % writers : x.written;
        if (held(q, x.group, q.len))
          write(q, x.group, x.in_group, q.len, k.data + (w * n + i) * d_k_, v.data + (w * n + i) * d_v_);
      }
    if (!prefix_) return;
    q.tokens.insert(q.tokens.end(), tokens.begin(), tokens.end());
    for (std::size_t g = 0; g < 2; ++g)  // the blocks whose last row it wrote
      if (width_[g] > 0) index_.add_filled(g, q.tables[g], q.tokens, from, q.len, bs_);
  }
  /// The positions layer x of q's prefill queries may read when n steps come after `before`: the rows it reads now
  /// (those its blocks hold), then the new ones (the cross layer: its encoder rows).
  std::vector<std::size_t> positions(const sequence& q, const hybrid_layer& x, std::size_t before,
                                     std::size_t n) const {
    std::vector<std::size_t> out;
    const bool cross = x.group == hybrid_group::cross, windowed = Rules::windowed(x.group) && shape_.window > 0;
    const std::size_t held = cross ? shape_.cross : before, span = shape_.window - shape_.keep;
    for (std::size_t p = 0; p < held; ++p)
      if (!windowed || p < shape_.keep || (p + span >= held && table(q, x.group)[p / bs_] >= 0)) out.push_back(p);
    for (std::size_t p = before; !cross && p < before + n; ++p) out.push_back(p);
    return out;
  }
  Eigen::Index pool_row(const sequence& q, const hybrid_layer& x, std::size_t p) const {
    const std::ptrdiff_t b = q.tables[group(x.group)].at(p / bs_);
    if (b < 0) throw index_error("hybrid: a row the layer reads lies in no block");  // a broken rule, not a refusal
    return slot(static_cast<std::size_t>(b), x.in_group, p % bs_);
  }
  /// Gives back the sliding blocks of q the window at length `at` no longer reads.
  void drop_passed(sequence& q, std::size_t at) {
    for (const hybrid_group g : {hybrid_group::full, hybrid_group::sliding})
      for (std::size_t j : planned(q, g, 0, at).drop)
        unref(static_cast<std::size_t>(std::exchange(table(q, g)[j], -1)));
  }
  /// Whether group g of a sequence of n rows (cross: the encoder's) needs block j.
  bool wanted(hybrid_group g, std::size_t j, std::size_t n) const {
    return !Rules::windowed(g) || Rules::in_window(j, bs_, n, shape_.window, shape_.keep);
  }
  /// Group g's plan for n more rows, its window taken at length `at`.
  plan planned(sequence& q, hybrid_group g, std::size_t n, std::size_t at) {
    plan p{g, {}, {}, false};
    if (width_[group(g)] == 0) return p;
    const auto& t = table(q, g);
    const std::size_t blocks = (q.len + n + bs_ - 1) / bs_;
    for (std::size_t j = 0; j < blocks; ++j) {
      const bool want = wanted(g, j, at), has = j < t.size() && t[j] >= 0;
      if (has && !want) p.drop.push_back(j);
      if (!has && want) p.take.push_back(j);
    }
    const std::size_t last = q.len / bs_;
    p.copy = q.len % bs_ != 0 && wanted(g, last, at) && t[last] >= 0 && refs_[static_cast<std::size_t>(t[last])] > 1;
    return p;
  }
  /// Carries out a plan's copy and takes (its drops are done).
  void grow(sequence& q, const plan& p, std::size_t n) {
    auto& t = table(q, p.g);
    t.resize((q.len + n + bs_ - 1) / bs_, -1);
    if (p.copy) {
      const std::size_t j = q.len / bs_, old = static_cast<std::size_t>(t[j]);
      const std::size_t fresh = hold(Rules::take(free_, 1)[0], p.g);
      for (std::size_t r = 0; r < q.len % bs_; ++r)
        for (std::size_t li = 0; li < width_[group(p.g)]; ++li)
          k_.row(written_slot(fresh, li, r)) = k_.row(slot(old, li, r)),
                                         v_.row(written_slot(fresh, li, r)) = v_.row(slot(old, li, r));
      t[j] = static_cast<std::ptrdiff_t>(fresh);
      unref(old);
    }
    for (std::size_t j : p.take) t[j] = static_cast<std::ptrdiff_t>(hold(Rules::take(free_, 1)[0], p.g));
  }
  std::size_t hold(std::size_t b, hybrid_group g) {
    refs_[b] = 1, owner_[b] = g;
    const bool first = layout_[b] == 0;  // never taken before
    if (Rules::relayout_on_take || first) layout_[b] = std::max<std::size_t>(width_[group(g)], 1);
    if (Rules::reformat_on_take || first) format_[b] = g;
    return b;
  }
  void unref(std::size_t b) {
    if (--refs_[b] > 0) return;
    index_.forget(b);
    const auto rows = static_cast<Eigen::Index>(bs_ * stride_), first = static_cast<Eigen::Index>(b * bs_ * stride_);
    if constexpr (poison_free_slots)
      k_.middleRows(first, rows).setConstant(nan()), v_.middleRows(first, rows).setConstant(nan());
    free_.push_back(b);
  }
  /// The pool row of row r of block b for the group's li-th writing layer: a block lays its rows out position by
  /// position, every layer of its group at each.
  Eigen::Index slot(std::size_t b, std::size_t li, std::size_t r) const {
    return static_cast<Eigen::Index>(b * bs_ * stride_ + r * layout_[b] + li);
  }
  /// Where a write lands: laid out for the group that holds the block (slot reads the layout recorded for it).
  Eigen::Index written_slot(std::size_t b, std::size_t li, std::size_t r) const {
    return static_cast<Eigen::Index>(b * bs_ * stride_ + r * std::max<std::size_t>(width_[group(owner_[b])], 1) + li);
  }
  bool held(const sequence& q, hybrid_group g, std::size_t p) const {
    const auto& t = q.tables[group(g)];
    return p / bs_ < t.size() && t[p / bs_] >= 0;
  }
  void write(sequence& q, hybrid_group g, std::size_t li, std::size_t p, const double* k, const double* v) {
    const auto b = static_cast<std::size_t>(table(q, g)[p / bs_]);
    const Eigen::Index at = written_slot(b, li, p % bs_);
    const std::size_t f = format_[b] == hybrid_group::sliding ? 1 : 0;  // the cross group stores as the full one
    store_row(ks_[f], k, k_.data() + at * k_.cols()), store_row(vs_[f], v, v_.data() + at * v_.cols());
  }
  /// The pool rows layer x of q reads, in order: every row, or for a windowed group the sinks and the window.
  std::vector<Eigen::Index> read_rows(const sequence& q, const hybrid_layer& x) const {
    std::vector<Eigen::Index> rows;
    for (std::size_t p : positions(q, x, q.len, 0)) rows.push_back(pool_row(q, x, p));
    return rows;
  }
  row_matrix gather(const row_matrix& pool, const sequence& q, std::size_t layer) const {
    if (layer >= layers_.size()) throw index_error("hybrid: no such layer");
    const std::vector<Eigen::Index> rows = read_rows(q, layers_[layer]);
    row_matrix out(static_cast<Eigen::Index>(rows.size()), pool.cols());
    for (std::size_t i = 0; i < rows.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = pool.row(rows[i]);
    return out;
  }

  /// The longest prefix of whole blocks of `p` whose blocks the full group holds, shortened until the sliding
  /// group holds those its window reads at that length; s shares them.
  void hit(sequence& s, std::span<const std::int64_t> p) {
    // The blocks group g holds at m blocks: its window's at the length a hit holds (Rules::next_step: the next row's).
    auto wants = [&](std::size_t g, std::size_t m) {
      return [this, g, at = Rules::next_step ? m * bs_ + 1 : m * bs_](std::size_t j) {
        return wanted(static_cast<hybrid_group>(g), j, at);
      };
    };
    auto found = [&](std::size_t g, std::size_t m) {
      return width_[g] == 0 || index_.registered(g, p, m, bs_, wants(g, m));
    };
    std::size_t m = p.size() / bs_;
    while (m > 0 && !found(0, m)) --m;
    while (!Rules::hit_full_group_only && m > 0 && !found(1, m)) --m;
    s.len = m * bs_, s.tokens = token_prefix(p, s.len);
    for (std::size_t g = 0; g < 2; ++g)
      if (width_[g] > 0)
        for (std::ptrdiff_t b : s.tables[g] = index_.table(g, p, m, bs_, wants(g, m)))
          if (b >= 0) ++refs_[static_cast<std::size_t>(b)];
  }

  hybrid_layers shape_;
  std::vector<hybrid_layer> layers_;
  std::size_t bs_, d_k_, d_v_, stride_ = 1;
  std::size_t width_[hybrid_groups] = {};
  row_matrix k_, v_;                  // block b: rows [b bs stride, (b + 1) bs stride)
  std::vector<std::size_t> refs_;     // per block: the tables holding it
  std::vector<hybrid_group> owner_;   // per block: the group that took it last
  std::vector<std::size_t> layout_;   // per block: the writing layers per position it is laid out for
  std::vector<hybrid_group> format_;  // per block: the group whose formats its rows round to
  std::vector<std::size_t> free_;
  std::map<seq_id, sequence> seqs_;
  seq_id next_ = 0;
  std::array<side, 2> ks_, vs_;  // the element formats and scales of the full (and cross) and sliding groups
  bool prefix_;
  hybrid_prefix_index index_;
};

using hybrid = basic_hybrid<>;
}  // namespace kvconform
