// The tiered specification, written independently of the caches it judges (docs/kinds/tiered.md).
#include "oracle/models/tiered_model.h"

#include <algorithm>
#include <string>

namespace kvconform {

tiered_model::tiered_model(const cache_config& c, const numeric_profile& p, const policy_set& policies)
    : prefix_model(c, p, policies),
      tier_rows_(c.host_factor * c.block_size),
      fifo_(policies.is("completion_order", "fifo")),
      abort_(policies.is("load_failure", "abort")),
      device_absent_(policies.is("host_eviction", "device_absent")) {
  host_.capacity = c.host_blocks, host_.name = "host";
  disk_.capacity = c.disk_blocks, disk_.name = "disk";
}

bool tiered_model::ready(int t, const chain& c) const {
  const tier& x = t == 1 ? host_ : disk_;
  const auto it = x.entries.find(c);
  return it != x.entries.end() && it->second.ready;
}

bool tiered_model::evictable(const tier& t, const chain& c, const entry& e) const {
  if (!e.ready || e.pins > 0) return false;
  return !(device_absent_ && &t == &host_ && registered_.count({0, c}) != 0);
}

std::size_t tiered_model::evictable_entries(const tier& t, const std::vector<chain>& except) const {
  std::size_t n = 0;
  for (const auto& [c, e] : t.entries)
    if (evictable(t, c, e) && std::find(except.begin(), except.end(), c) == except.end()) ++n;
  return n;
}

void tiered_model::evict_lru(tier& t, const std::vector<chain>& except) {
  auto victim = t.entries.end();
  for (auto it = t.entries.begin(); it != t.entries.end(); ++it)
    if (evictable(t, it->first, it->second) && std::find(except.begin(), except.end(), it->first) == except.end() &&
        (victim == t.entries.end() || it->second.used < victim->second.used))
      victim = it;
  t.entries.erase(victim);
  facts_.entry_evicted = true;
}

bool tiered_model::make_room(tier& t, std::size_t n, const std::vector<chain>& except) {
  const std::size_t free = t.capacity - t.entries.size();
  if (free >= n) return true;
  if (free + evictable_entries(t, except) < n) return false;
  for (std::size_t i = free; i < n; ++i) evict_lru(t, except);
  return true;
}

void tiered_model::make_ready(tier& t, const chain& c, const std::vector<row>& keys, const std::vector<row>& values) {
  entry& e = t.entries.at(c);
  e.ready = true, e.used = ++tick_;
  e.rows.emplace(profile_.keys, profile_.values, config_, config_.d_k, config_.d_v);
  for (std::size_t i = 0; i < keys.size(); ++i) e.rows->push(keys[i], values[i]);
}

expectation tiered_model::pending_refusal(const op& o) {
  expectation e{.accepted = false, .reasons = refuse_pending};
  note_ = "seq " + std::to_string(o.seq) + "'s load (transfer " + std::to_string(loading_.at(o.seq)) +
          ") is pending: it refuses every op, and shows none of the rows on their way, until the load ends";
  // A cache may check the op's own fields before the sequence's state.
  if ((o.kind == op_kind::append || o.kind == op_kind::prefill) && malformed(o)) e.reasons |= refuse_shape;
  if (o.kind == op_kind::decode && (o.q.shape.size() != 1 || o.q.shape[0] != config_.d_k)) e.reasons |= refuse_shape;
  if (o.kind == op_kind::rollback && (o.count < 0 || static_cast<std::size_t>(o.count) > size(o.seq)))
    e.reasons |= refuse_index;
  if (o.kind == op_kind::fork) skip_handle();  // a refused fork still uses up its handle
  return e;
}

std::optional<expectation> tiered_model::own_op(const op& o) {
  facts_ = {};
  switch (o.kind) {
    case op_kind::store: return store(o);
    case op_kind::load: return load(o);
    case op_kind::complete: return complete(o);
    case op_kind::fail: return fail(o);
    case op_kind::evict: return evict_op(o);
    case op_kind::put: return put(o);
    case op_kind::fork:
    case op_kind::release:
    case op_kind::append:
    case op_kind::prefill:
    case op_kind::decode:
    case op_kind::rollback:
      if (is_live(o.seq) && loading(o.seq)) return pending_refusal(o);
      return std::nullopt;  // a create's and a fork's prompt are the pool's (prefix_model::prompt)
    default: return std::nullopt;
  }
}

expectation tiered_model::store(const op& o) {
  const std::int64_t id = transfers_++;  // every store and load op uses up a number, refused or not
  if (!is_live(o.seq) || !has_tier(o.tier) || o.block < 0) return {.accepted = false, .reasons = refuse_index};
  if (loading(o.seq)) return {.accepted = false, .reasons = refuse_pending};
  const sequence& s = at(o.seq);
  const auto block = static_cast<std::size_t>(o.block);
  const std::size_t end = (std::min(block, s.rows.size() / tier_rows_) + 1) * tier_rows_, first = end - tier_rows_;
  if (block >= s.rows.size() / tier_rows_) {  // not all written (and past the rows, its end could overflow)
    note_ = "a store reads only rows whose writes finished: seq " + std::to_string(o.seq) + " holds " +
            std::to_string(s.rows.size()) + " rows, not all of tier block " + std::to_string(o.block);
    return {.accepted = false, .reasons = refuse_pending};
  }
  const chain c = chain_to(s.tokens, end);
  if (o.tier == 2 && !ready(1, c)) return {.accepted = false, .reasons = refuse_empty};  // nothing on host to copy
  tier& to = tier_of(o.tier);
  if (const auto it = to.entries.find(c); it != to.entries.end()) {  // present or on its way: nothing to do
    if (it->second.ready) it->second.used = ++tick_;
    facts_.duplicate_store = true;
    return {};
  }
  if (!make_room(to, 1)) return room_refusal(to);
  to.entries[c];  // pending
  transfer x{.dir = o.tier == 1 ? direction::store_host : direction::store_disk, .seq = o.seq, .chains = {c}};
  if (o.tier == 1) {
    const std::size_t f = config_.host_factor, j0 = static_cast<std::size_t>(o.block) * f;
    for (std::size_t j = j0; j < j0 + f; ++j) x.blocks.push_back(s.blocks[j]), hold(s.blocks[j]);
    for (std::size_t i = first; i < end; ++i) {
      const auto k = s.rows.keys.given(i), v = s.rows.values.given(i);
      x.keys.emplace_back(k.begin(), k.end()), x.values.emplace_back(v.begin(), v.end());
    }
  } else {
    entry& from = host_.entries.at(c);
    ++from.pins;
    for (std::size_t i = 0; i < tier_rows_; ++i) {
      const auto k = from.rows->keys.given(i), v = from.rows->values.given(i);
      x.keys.emplace_back(k.begin(), k.end()), x.values.emplace_back(v.begin(), v.end());
    }
  }
  note_ = "transfer " + std::to_string(id) + (o.tier == 1 ? " holds its source blocks" : " pins its host entry") +
          " until it ends: nothing may free, reuse, evict or write them before";
  pending_.emplace(id, std::move(x));
  return {};
}

expectation tiered_model::room_refusal(const tier& t) {
  for (const auto& [c, e] : t.entries)
    if (!e.ready || e.pins > 0)
      note_ = std::string("entries a pending transfer reads or writes are never evicted to make room (") + t.name +
              " holds " + std::to_string(t.entries.size()) + " of " + std::to_string(t.capacity) + ")";
  return {.accepted = false, .reasons = refuse_capacity};
}

expectation tiered_model::load(const op& o) {
  const std::int64_t id = transfers_++;
  if (!is_live(o.seq) || !has_tier(o.tier)) return {.accepted = false, .reasons = refuse_index};
  if (loading(o.seq)) return {.accepted = false, .reasons = refuse_pending};
  const sequence& s = at(o.seq);
  const auto& want = prompts_.at(o.seq);
  const std::size_t rows = s.rows.size(), bs = config_.block_size;
  // A load continues the sequence's prompt from a block boundary, over whole tier blocks the hit limit allows.
  const bool on_prompt =
      rows % bs == 0 && rows <= want.size() && std::equal(s.tokens.begin(), s.tokens.end(), want.begin());
  const std::size_t limit = all_but_last_ && !want.empty() ? want.size() - 1 : want.size();
  std::vector<chain> found;
  for (std::size_t end = (rows / tier_rows_ + 1) * tier_rows_; on_prompt && end <= limit; end += tier_rows_) {
    chain c = chain_to(want, end);
    if (o.tier == 1 ? !ready(1, c) : !ready(2, c) || host_.entries.count(c) != 0) break;
    found.push_back(std::move(c));
  }
  if (found.empty()) return {.accepted = false, .reasons = refuse_empty};
  transfer x{.dir = o.tier == 1 ? direction::load_host : direction::load_disk, .seq = o.seq, .chains = found};
  x.from = rows;
  if (o.tier == 1) {
    const std::size_t n = (found.size() * tier_rows_ + (rows / tier_rows_) * tier_rows_ - rows) / bs;
    if (available_blocks() < n) return {.accepted = false, .reasons = refuse_capacity};
    taking(n);
    for (std::size_t i = 0; i < n; ++i) x.blocks.push_back(take_block());
    sequence& w = at(o.seq);
    w.blocks.insert(w.blocks.end(), x.blocks.begin(), x.blocks.end());
    facts_.straddles = rows % tier_rows_ != 0;
  } else if (!make_room(host_, found.size())) {
    return room_refusal(host_);
  } else {
    for (const chain& c : found) host_.entries[c];  // pending
  }
  tier& from = tier_of(o.tier);
  for (const chain& c : found) {
    entry& e = from.entries.at(c);
    ++e.pins, e.used = ++tick_;
  }
  loading_[o.seq] = id;
  note_ = facts_.straddles ? "seq " + std::to_string(o.seq) + " holds rows [0, " + std::to_string(rows) +
                                 ") on the device: the load fills only the blocks past them (a device hit and a "
                                 "tier hit never both land in one sequence)"
                           : "the load pins the entries it reads until it ends, and seq " + std::to_string(o.seq) +
                                 " shows none of its rows before it completes";
  pending_.emplace(id, std::move(x));
  return {};
}

bool tiered_model::older_pending(std::int64_t id) const {
  const direction d = pending_.at(id).dir;
  for (const auto& [other, x] : pending_)
    if (other < id && x.dir == d) return true;
  return false;
}

void tiered_model::end(std::int64_t id) {
  const transfer& x = pending_.at(id);
  if (x.seq >= 0 && loading_.count(x.seq) && loading_.at(x.seq) == id) loading_.erase(x.seq);
  pending_.erase(id);
}

expectation tiered_model::complete(const op& o) {
  if (!pending_.count(o.transfer)) return {.accepted = false, .reasons = refuse_index};
  if (fifo_ && older_pending(o.transfer)) {
    facts_.order_refused = true;
    return {.accepted = false, .reasons = refuse_order};
  }
  for (const auto& entry : pending_) facts_.out_of_order = facts_.out_of_order || entry.first < o.transfer;
  const transfer x = pending_.at(o.transfer);
  facts_.wide = config_.host_factor > 1;
  switch (x.dir) {
    case direction::store_host:
      make_ready(host_, x.chains[0], x.keys, x.values);
      end(o.transfer);
      for (std::int64_t b : x.blocks) drop_ref(b);
      break;
    case direction::store_disk:
      make_ready(disk_, x.chains[0], x.keys, x.values);
      --host_.entries.at(x.chains[0]).pins;
      end(o.transfer);
      break;
    case direction::load_host: {
      end(o.transfer);
      sequence& s = at(x.seq);
      const auto& want = prompts_.at(x.seq);
      const std::size_t bs = config_.block_size, skip = x.from % tier_rows_;
      for (std::size_t t = 0; t < x.chains.size(); ++t) {
        entry& e = host_.entries.at(x.chains[t]);
        --e.pins;
        for (std::size_t i = t == 0 ? skip : 0; i < tier_rows_; ++i) {
          const auto k = e.rows->keys.given(i), v = e.rows->values.given(i);
          s.rows.push(row(k.begin(), k.end()), row(v.begin(), v.end()));
          s.tokens.push_back(want[s.tokens.size()]);
          if (s.tokens.size() % bs == 0) filled(s, s.tokens.size() / bs - 1);
        }
      }
      history_.push_back({0, s.tokens});
      note_ = "the rows a load brings are the rows stored, bit for bit, in the sequence's blocks past its own";
      host_.hit_rows += static_cast<std::int64_t>(s.rows.size() - x.from);
      facts_.host_hit = true;
      break;
    }
    case direction::load_disk:
      for (const chain& c : x.chains) {
        entry& e = disk_.entries.at(c);
        --e.pins;
        std::vector<row> keys, values;
        for (std::size_t i = 0; i < tier_rows_; ++i) {
          const auto k = e.rows->keys.given(i), v = e.rows->values.given(i);
          keys.emplace_back(k.begin(), k.end()), values.emplace_back(v.begin(), v.end());
        }
        make_ready(host_, c, keys, values);
      }
      disk_.hit_rows += static_cast<std::int64_t>(x.chains.size() * tier_rows_);
      facts_.disk_hit = true;
      end(o.transfer);
      break;
  }
  return {};
}

expectation tiered_model::fail(const op& o) {
  if (!pending_.count(o.transfer)) return {.accepted = false, .reasons = refuse_index};
  const transfer x = pending_.at(o.transfer);
  end(o.transfer);
  switch (x.dir) {
    case direction::store_host:
      host_.entries.erase(x.chains[0]);
      for (std::int64_t b : x.blocks) drop_ref(b);
      facts_.store_failed = true;
      note_ = "a failed store gives its entry's slot back and lets go of its source blocks";
      return {};
    case direction::store_disk:
      disk_.entries.erase(x.chains[0]);
      --host_.entries.at(x.chains[0]).pins;
      facts_.store_failed = true;
      return {};
    case direction::load_host: {
      for (const chain& c : x.chains) --host_.entries.at(c).pins;
      sequence& s = at(x.seq);
      for (std::size_t i = 0; i < x.blocks.size(); ++i) {  // last first, as a release: never registered, so free
        const std::int64_t b = s.blocks.back();
        s.blocks.pop_back();
        drop_ref(b);
      }
      break;
    }
    case direction::load_disk:
      for (const chain& c : x.chains) --disk_.entries.at(c).pins, host_.entries.erase(c);
      break;
  }
  facts_.load_failed = true;
  note_ = "a failed load drops what it brought: seq " + std::to_string(x.seq) +
          (abort_ ? " is released (load_failure=abort)" : " holds exactly what it held before the load");
  if (!abort_) return {};
  release(x.seq), facts_.load_aborted = true;
  return {.preempted = {x.seq}};  // answered as a preemption is: the sequence the op ended
}

expectation tiered_model::evict_op(const op& o) {
  if (o.tier < 0 || o.tier > 2 || (o.tier == 2 && disk_.capacity == 0) || o.count < 1)
    return {.accepted = false, .reasons = refuse_index};
  const auto n = static_cast<std::size_t>(o.count);
  if (o.tier > 0) {
    tier& t = tier_of(o.tier);
    if (evictable_entries(t) < n) return room_refusal(t);
    for (std::size_t i = 0; i < n; ++i) evict_lru(t);
    return {};
  }
  if (evictable_blocks() < n) return {.accepted = false, .reasons = refuse_capacity};
  for (std::size_t i = 0; i < n; ++i) {
    // The block an append would evict first; under free_order=one_queue it keeps its place in the queue, now free.
    if (one_queue_) {
      auto it = std::find_if(queue_.begin(), queue_.end(), [](std::int64_t b) { return b >= 0; });
      const std::int64_t b = *it;
      *it = -1;
      prefix_model::evict(b);
    } else {
      const std::int64_t b = evictable_.front();
      evictable_.pop_front();
      prefix_model::evict(b);
    }
  }
  return {};
}

expectation tiered_model::put(const op& o) {
  if (!has_tier(o.tier)) return {.accepted = false, .reasons = refuse_index};
  const std::size_t n = o.tokens.size();
  const auto steps = append_steps(o, config_.d_k, config_.d_v);
  if (n == 0 || n % tier_rows_ != 0 || !steps || *steps != n || o.k.shape.size() != 2 || o.v.shape.size() != 2)
    return {.accepted = false, .reasons = refuse_shape};
  tier& t = tier_of(o.tier);
  std::vector<chain> chains, fresh;
  for (std::size_t end = tier_rows_; end <= n; end += tier_rows_) {
    chains.push_back(chain_to(o.tokens, end));
    if (!t.entries.count(chains.back())) fresh.push_back(chains.back());
  }
  if (!make_room(t, fresh.size(), chains)) return room_refusal(t);
  for (std::size_t b = 0; b < chains.size(); ++b) {
    entry& e = t.entries[chains[b]];
    if (std::find(fresh.begin(), fresh.end(), chains[b]) == fresh.end()) {
      if (e.ready) e.used = ++tick_;
      continue;
    }
    std::vector<row> keys, values;
    for (std::size_t i = b * tier_rows_; i < (b + 1) * tier_rows_; ++i)
      keys.push_back(stored_row(o.k, i, profile_.storage)), values.push_back(stored_row(o.v, i, profile_.storage));
    make_ready(t, chains[b], keys, values);
  }
  facts_.put = true;
  history_.push_back({0, o.tokens});  // a prompt later creates may look up
  return {};
}

}  // namespace kvconform
