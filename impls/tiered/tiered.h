// The reference tiered cache: a prefix pool whose blocks are copied to host and disk tiers and back by transfers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "impls/common/formats.h"
#include "impls/prefix/prefix.h"
#include "impls/tiered/rules.h"
#include "impls/tiered/tier_store.h"

namespace kvconform {

/// A prefix pool (basic_prefix: its ops, rules and policies) with a host tier of host_blocks slots and an optional
/// disk tier of disk_blocks, a slot holding one tier block: host_factor device blocks, packed row by row as k then
/// v. Entries are keyed by the hash chain of their last device block. store, load, put and evict as the kind's
/// document says; a transfer copies when it completes (the device blocks and entries it reads are held or pinned
/// until then), and a sequence whose load is pending refuses everything but its end.
template <class Rules = tiered_rules>
class basic_tiered : public basic_prefix<Rules> {
  using base = basic_prefix<Rules>;
  using base::block_size_;
  using typename base::row_matrix;

 public:
  using seq_id = typename base::seq_id;

  basic_tiered(std::size_t num_blocks, std::size_t block_size, std::size_t d_k, std::size_t d_v,
               std::size_t host_blocks, std::size_t host_factor, std::size_t disk_blocks = 0)
      : base(num_blocks, block_size, d_k, d_v), factor_(host_factor), rows_(host_factor * block_size) {
    if (host_blocks == 0 || host_factor == 0) throw shape_error("tiered: host_blocks and host_factor must be positive");
    tiers_[0].init(host_blocks, rows_, d_k + d_v);
    tiers_[1].init(disk_blocks, rows_, d_k + d_v);
  }

  // The prefix ops, refused with pending_error on a sequence whose load is pending.
  seq_id create(std::span<const std::int64_t> tokens) {
    const seq_id s = base::create(tokens);
    prompts_[s].assign(tokens.begin(), tokens.end());
    return s;
  }
  seq_id fork(seq_id s) {
    ready(s);
    const seq_id f = base::fork(s);
    prompts_[f] = prompts_.at(s);
    return f;
  }
  void release(seq_id s) { ready(s), base::release(s); }
  // Rows are stored in the declared format as they arrive (a double reference keeps them as they are).
  void append(seq_id s, array_view k, array_view v, std::span<const std::int64_t> tokens) {
    std::vector<double> kb, vb;
    ready(s), base::append(s, as_stored<Rules>(k, 0, scales_[0], kb), as_stored<Rules>(v, 1, scales_[1], vb), tokens);
  }
  decode_result prefill(seq_id s, array_view k, array_view v, std::span<const std::int64_t> tokens, array_view q) {
    std::vector<double> kb, vb;
    ready(s);
    return base::prefill(s, as_stored<Rules>(k, 0, scales_[0], kb), as_stored<Rules>(v, 1, scales_[1], vb), tokens, q);
  }
  /// The per-tensor scales of a scaled element format (docs/numerics.md §6.1).
  void set_scales(double k, double v) { scales_[0] = k, scales_[1] = v; }
  void rollback(seq_id s, std::size_t n) { ready(s), base::rollback(s, n); }
  decode_result decode_step(seq_id s, array_view q) const {
    ready(s);
    return base::decode_step(s, q);
  }

  /// Begins copying tier block `block` of s to tier 1 (host, from its device blocks) or 2 (disk, from the host
  /// entry). The transfer's id, or -1 when the tier has the chain already (nothing to copy).
  std::int64_t store(seq_id s, std::size_t block, int tier) {
    if (tier != 1 && !(tier == 2 && tiers_[1].slots > 0)) throw index_error("store: no such tier");
    ready(s);
    const auto& q = this->find(s);
    // Past the tier block being written nothing can be (and its end could overflow).
    const std::size_t written = q.tokens.size() / rows_, end = (std::min(block, written) + 1) * rows_;
    if (block > written || (block == written && (Rules::store_written_only || q.blocks.size() * block_size_ < end)))
      throw pending_error("store: the tier block's rows are not all written");
    const std::uint64_t key = q.tokens.size() >= end ? q.hashes[(block + 1) * factor_ - 1]
                                                     : partial_key<Rules>(q.hashes, q.tokens, block_size_);
    tier_store& to = tiers_[tier - 1];
    if (tier == 2 && !tiers_[0].ready(key)) throw empty_error("store: the host has no such entry to copy");
    if (const auto it = to.entries.find(key); it != to.entries.end()) {
      if (it->second.ready) it->second.used = ++clock_;
      return -1;
    }
    const std::size_t slot = take_slot(to, {});
    tier_entry& e = to.entries[key];
    e.slot = slot;
    e.chain.assign(q.tokens.begin(), q.tokens.begin() + static_cast<std::ptrdiff_t>(std::min(end, q.tokens.size())));
    transfer x{tier == 1 ? host_store : disk_store, s, {}, {key}, 0};
    if (tier == 1) {
      for (std::size_t j = block * factor_; j < (block + 1) * factor_; ++j) {
        x.blocks.push_back(q.blocks[j]);
        if (Rules::hold_store_sources) ++this->blocks_[q.blocks[j]].refs;
      }
    } else {
      ++tiers_[0].entries.at(key).pins;
    }
    transfers_.emplace(next_transfer_, x);
    return next_transfer_++;
  }

  /// Begins copying the tier blocks that continue s's prompt from its rows: from tier 1 into device blocks past its
  /// rows, or from tier 2 into host entries. Its id.
  std::int64_t load(seq_id s, int tier) {
    if (tier != 1 && !(tier == 2 && tiers_[1].slots > 0)) throw index_error("load: no such tier");
    ready(s);
    auto& q = this->find(s);
    const auto& prompt = prompts_.at(s);
    const std::size_t rows = q.tokens.size();
    const bool on_prompt = rows % block_size_ == 0 && rows <= prompt.size() &&
                           std::equal(q.tokens.begin(), q.tokens.end(), prompt.begin());
    const std::size_t limit = Rules::all_but_last && !prompt.empty() ? prompt.size() - 1 : prompt.size();
    std::vector<std::uint64_t> keys;
    const std::vector<std::uint64_t> chain =
        on_prompt ? hash_chain<Rules>(prompt, limit, block_size_) : std::vector<std::uint64_t>{};
    for (std::size_t t = rows / rows_; (t + 1) * factor_ <= chain.size(); ++t) {
      const std::uint64_t key = chain[(t + 1) * factor_ - 1];
      if (tier == 1 ? !tiers_[0].ready(key) : !tiers_[1].ready(key) || tiers_[0].entries.count(key)) break;
      keys.push_back(key);
    }
    if (keys.empty()) throw empty_error("load: no tier block continues the sequence's prompt");
    transfer x{tier == 1 ? host_load : disk_load, s, {}, keys, rows};
    if (tier == 1) {
      const std::size_t first = Rules::load_past_device_hit ? rows : rows / rows_ * rows_;
      const std::size_t n = ((rows / rows_ + keys.size()) * rows_ - first) / block_size_;
      std::vector<std::size_t> fresh = this->take(n);
      if (!Rules::load_past_device_hit) {  // the whole first tier block: the device-hit blocks given up for new ones
        x.from = first;
        for (std::size_t j = first / block_size_; j < q.blocks.size(); ++j) this->unuse(q.blocks[j]);
        q.blocks.resize(first / block_size_), q.tokens.resize(first), q.hashes.resize(first / block_size_);
      }
      for (std::size_t b : fresh) q.blocks.push_back(b), this->blocks_[b].refs = 1, x.blocks.push_back(b);
    } else {
      if (tiers_[0].free.size() + evictable_entries(tiers_[0], keys) < keys.size())
        throw capacity_error("load: the host has too little room for the disk's entries");
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::size_t slot = take_slot(tiers_[0], keys);
        tier_entry& e = tiers_[0].entries[keys[i]];
        e.slot = slot, e.chain = tiers_[1].entries.at(keys[i]).chain;
      }
    }
    for (std::uint64_t key : keys) {
      tier_entry& e = tiers_[tier - 1].entries.at(key);
      e.used = ++clock_;
      if (Rules::pin_load_sources) ++e.pins;
    }
    loading_[s] = next_transfer_;
    if (!Rules::rows_at_completion && tier == 1)  // readable at once: whatever the blocks held before
      q.tokens.insert(q.tokens.end(), prompt.begin() + static_cast<std::ptrdiff_t>(q.tokens.size()),
                      prompt.begin() + static_cast<std::ptrdiff_t>(rows + x.blocks.size() * block_size_));
    transfers_.emplace(next_transfer_, x);
    return next_transfer_++;
  }

  /// The transfer's copy is done: its destination holds the rows (a load's are registered as an append's are).
  void complete(std::int64_t id) {
    const transfer x = pending(id);
    if (Rules::fifo)
      for (const auto& [other, y] : transfers_)
        if (other < id && y.dir == x.dir)
          throw order_error("complete: an earlier transfer of its direction is pending");
    end(id);
    switch (x.dir) {
      case host_store: {
        tier_store& h = tiers_[0];
        tier_entry& e = h.entries.at(x.keys[0]);
        for (std::size_t j = 0; j < factor_; ++j)
          for (std::size_t r = 0; r < block_size_; ++r) {
            const auto row = static_cast<Eigen::Index>(this->first_row(x.blocks[j]) + static_cast<Eigen::Index>(r));
            h.pack(e.slot, j * block_size_ + r, this->k_.row(row), this->v_.row(row));
          }
        e.ready = true, e.used = ++clock_;
        if (Rules::hold_store_sources)
          for (std::size_t b : x.blocks) this->unuse(b);
        break;
      }
      case disk_store: {
        tier_entry& from = tiers_[0].entries.at(x.keys[0]);
        tier_entry& e = tiers_[1].entries.at(x.keys[0]);
        tiers_[1].copy_slot(e.slot, tiers_[0], from.slot);
        e.ready = true, e.used = ++clock_;
        --from.pins;
        break;
      }
      case host_load: return finish_load(x);
      case disk_load:
        for (std::uint64_t key : x.keys) {
          tier_entry& from = tiers_[1].entries.at(key);
          tier_entry& e = tiers_[0].entries.at(key);
          tiers_[0].copy_slot(e.slot, tiers_[1], from.slot);
          e.ready = true, e.used = ++clock_;
          if (Rules::pin_load_sources) --from.pins;
        }
        tiers_[1].hit_rows += x.keys.size() * rows_;
        break;
    }
  }

  /// The transfer failed: its destination is dropped; a load's sequence is left as before the load, or released
  /// (load_failure=abort), which the result lists.
  std::vector<seq_id> fail(std::int64_t id) {
    const transfer x = pending(id);
    end(id);
    switch (x.dir) {
      case host_store:
        tiers_[0].drop(x.keys[0], Rules::free_failed_slot);
        if (Rules::hold_store_sources)
          for (std::size_t b : x.blocks) this->unuse(b);
        return {};
      case disk_store:
        tiers_[1].drop(x.keys[0], Rules::free_failed_slot);
        --tiers_[0].entries.at(x.keys[0]).pins;
        return {};
      case host_load: {
        for (std::uint64_t key : x.keys)
          if (Rules::pin_load_sources) --tiers_[0].entries.at(key).pins;
        auto& q = this->find(x.seq);
        if (!Rules::fail_restores_length) {  // the length the load would have reached, its rows never written
          const auto& prompt = prompts_.at(x.seq);
          q.tokens.insert(q.tokens.end(), prompt.begin() + static_cast<std::ptrdiff_t>(q.tokens.size()),
                          prompt.begin() + static_cast<std::ptrdiff_t>(x.from + x.blocks.size() * block_size_));
          break;
        }
        for (std::size_t i = 0; i < x.blocks.size(); ++i) this->unuse(q.blocks.back()), q.blocks.pop_back();
        break;
      }
      case disk_load:
        for (std::uint64_t key : x.keys) {
          if (Rules::pin_load_sources) --tiers_[1].entries.at(key).pins;
          tiers_[0].drop(key, true);
        }
        break;
    }
    if (!Rules::abort_on_fail) return {};
    base::release(x.seq);
    return {x.seq};
  }

  /// Evicts the `count` least recently used evictable blocks (tier 0) or ready, unpinned entries (1 host, 2 disk).
  void evict(int tier, std::size_t count) {
    if (tier < 0 || tier > 2 || (tier == 2 && tiers_[1].slots == 0) || count == 0)
      throw index_error("evict: no such tier");
    if (tier > 0) {
      tier_store& t = tiers_[tier - 1];
      if (evictable_entries(t, {}, false) < count) throw capacity_error("evict: too few evictable entries");
      for (std::size_t i = 0; i < count; ++i) t.evict_lru(may_go(t, false), {});
      return;
    }
    if (this->evictable_count_ < count) throw capacity_error("evict: too few evictable blocks");
    for (std::size_t i = 0; i < count; ++i) {
      if (Rules::one_queue) {  // the oldest registered block of the queue, which keeps its place, free
        const auto it = std::find_if(this->queue_.begin(), this->queue_.end(),
                                     [&](std::size_t b) { return this->blocks_[b].evictable; });
        this->forget(*it);
      } else {
        const std::size_t b = this->evictable_.begin()->second;
        this->evictable_.erase(this->evictable_.begin());
        this->forget(b), this->free_.push_back(b);
      }
    }
  }

  /// Stores the rows of `tokens` (whole tier blocks) in tier 1 or 2 at once.
  void put(int tier, std::span<const std::int64_t> tokens, array_view k_in, array_view v_in) {
    if (tier != 1 && !(tier == 2 && tiers_[1].slots > 0)) throw index_error("put: no such tier");
    std::vector<double> kb, vb;
    const array_view k = as_stored<Rules>(k_in, 0, scales_[0], kb), v = as_stored<Rules>(v_in, 1, scales_[1], vb);
    if (k.rank != 2 || v.rank != 2) throw shape_error("put: k and v must be 2-D");
    const std::size_t n = checked_append_steps(k, v, this->d_k(), this->d_v());
    if (n != tokens.size() || n == 0 || n % rows_ != 0) throw shape_error("put: whole tier blocks of tokens, k and v");
    tier_store& t = tiers_[tier - 1];
    const std::vector<std::uint64_t> chain = hash_chain<Rules>({tokens.begin(), tokens.end()}, n, block_size_);
    std::vector<std::uint64_t> keys, fresh;
    for (std::size_t b = 0; b < n / rows_; ++b) {
      keys.push_back(chain[(b + 1) * factor_ - 1]);
      if (!t.entries.count(keys.back())) fresh.push_back(keys.back());
    }
    if (t.free.size() + evictable_entries(t, keys) < fresh.size())
      throw capacity_error("put: the tier has too little room");
    for (std::size_t b = 0; b < keys.size(); ++b) {
      if (std::find(fresh.begin(), fresh.end(), keys[b]) == fresh.end()) {
        if (t.entries.at(keys[b]).ready) t.entries.at(keys[b]).used = ++clock_;
        continue;
      }
      const std::size_t slot = take_slot(t, keys);
      tier_entry& e = t.entries[keys[b]];
      e.slot = slot, e.ready = true, e.used = ++clock_;
      e.chain.assign(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>((b + 1) * rows_));
      for (std::size_t r = 0; r < rows_; ++r) {
        const std::size_t i = b * rows_ + r;
        t.pack(slot, r,
               Eigen::Map<const Eigen::RowVectorXd>(k.data + i * this->d_k(), static_cast<Eigen::Index>(this->d_k())),
               Eigen::Map<const Eigen::RowVectorXd>(v.data + i * this->d_v(), static_cast<Eigen::Index>(this->d_v())));
      }
    }
  }

  /// A tier's slots by state, and the rows its loads brought (host: to the device; disk: to the host).
  tier_counts counts(int tier) const { return tiers_[tier - 1].counts(); }
  std::size_t tiers() const { return tiers_[1].slots > 0 ? 2 : 1; }
  /// Each pending transfer's id and device blocks (a host store's sources, a host load's destinations).
  std::map<std::int64_t, std::vector<std::size_t>> pending_transfers() const {
    std::map<std::int64_t, std::vector<std::size_t>> out;
    for (const auto& [id, x] : transfers_) out[id] = x.blocks;
    return out;
  }
  /// Calls f(chain, keys, values) for every ready entry of a tier: its tokens and its rows, unpacked.
  template <class F>
  void for_each_entry(int tier, F f) const {
    const tier_store& t = tiers_[tier - 1];
    for (const auto& [key, e] : t.entries) {
      if (!e.ready) continue;
      row_matrix k(rows_i(), static_cast<Eigen::Index>(this->d_k())),
          v(rows_i(), static_cast<Eigen::Index>(this->d_v()));
      for (auto r = Eigen::Index{0}; r < rows_i(); ++r)
        t.unpack(e.slot, std::size_t(r), k.row(r), v.row(r), this->d_k(), this->d_k());
      f(e.chain, k, v);
    }
  }

 private:
  enum direction { host_store, disk_store, host_load, disk_load };
  struct transfer {
    direction dir;
    seq_id seq;
    std::vector<std::size_t> blocks;  // device blocks: a host store's sources, a host load's destinations
    std::vector<std::uint64_t> keys;  // entries: a store's destination, a load's sources
    std::size_t from = 0;             // a load: the sequence's rows when it began
  };
  /// A host load's completion: its rows written into the sequence's new blocks, registered as an append's are.
  void finish_load(const transfer& x) {
    auto& q = this->find(x.seq);
    const auto& prompt = prompts_.at(x.seq);
    if (!Rules::rows_at_completion) q.tokens.resize(x.from);
    for (std::size_t t = 0; t < x.keys.size(); ++t) {
      tier_entry& e = tiers_[0].entries.at(x.keys[t]);
      if (Rules::pin_load_sources) --e.pins;
      for (std::size_t j = 0; j < factor_; ++j)
        for (std::size_t r = 0; r < block_size_; ++r) {
          const std::size_t i = (x.from / rows_ + t) * rows_ + j * block_size_ + r;
          if (i < x.from) continue;  // the device holds it already
          const Eigen::Index row = this->slot(q, i);
          tiers_[0].unpack(e.slot, Rules::packed_row(j, r, block_size_, factor_), this->k_.row(row), this->v_.row(row),
                           this->d_k(), Rules::key_width(this->d_k(), this->d_v()));
          q.tokens.push_back(prompt[i]);
          this->register_if_full(q);
        }
    }
    tiers_[0].hit_rows += q.tokens.size() - x.from;
  }
  void ready(seq_id s) const {
    if (loading_.count(s)) throw pending_error("the sequence's load is pending");
  }
  const transfer& pending(std::int64_t id) const {
    const auto it = transfers_.find(id);
    if (it == transfers_.end()) throw index_error("no such pending transfer");
    return it->second;
  }
  void end(std::int64_t id) {
    const transfer& x = transfers_.at(id);
    if (const auto it = loading_.find(x.seq); it != loading_.end() && it->second == id) loading_.erase(it);
    transfers_.erase(id);
  }
  Eigen::Index rows_i() const { return static_cast<Eigen::Index>(rows_); }
  /// Whether an entry of t may go: to an evict op, or (`room`) to make room for a store, a load or a put.
  auto may_go(const tier_store& t, bool room = true) const {
    return [this, &t, room](std::uint64_t key, const tier_entry& e) {
      if ((e.pins > 0 && (Rules::room_respects_pins || !room)) || (!e.ready && Rules::pending_unevictable))
        return false;
      return !(Rules::device_absent && &t == &tiers_[0] && this->cached_.count(key) && !this->cached_.at(key).empty());
    };
  }
  std::size_t evictable_entries(const tier_store& t, const std::vector<std::uint64_t>& except, bool room = true) const {
    return t.count_if(may_go(t, room), except);
  }
  std::size_t take_slot(tier_store& t, const std::vector<std::uint64_t>& except) {
    return t.take_slot(may_go(t), except);
  }

  std::size_t factor_, rows_;
  tier_store tiers_[2];  // host, disk
  std::map<std::int64_t, transfer> transfers_;
  std::map<seq_id, std::int64_t> loading_;
  std::map<seq_id, std::vector<std::int64_t>> prompts_;
  double scales_[2] = {1, 1};
  std::int64_t next_transfer_ = 7;  // the cache's own numbering: the harness maps the trace's to it
  std::uint64_t clock_ = 0;
};

using tiered = basic_tiered<>;
/// The tiered reference storing keys in K and values in V, element formats only (impls/common/formats.h).
template <storage_format K, storage_format V = K>
using tiered_stored = stored<basic_tiered, tiered_rules, K, V>;

}  // namespace kvconform
