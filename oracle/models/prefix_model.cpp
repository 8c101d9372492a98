// The prefix specification, written independently of the caches it judges (docs/kinds/prefix.md).
#include "oracle/models/prefix_model.h"

#include <algorithm>
#include <iterator>

namespace kvconform {

prefix_model::prefix_model(const cache_config& c, const numeric_profile& p, const policy_set& policies)
    : block_pool_model(c, p, policies),
      all_but_last_(!policies.choice("hit_limit").empty()),
      drop_last_hit_(policies.is("hit_limit", "all_but_last_block")),
      one_queue_(policies.is("free_order", "one_queue")),
      leaf_(policies.is("eviction", "leaf")),
      duplicates_(policies.is("duplicates", "registered") ? duplicate_rule::registered
                  : policies.is("duplicates", "adopted")  ? duplicate_rule::adopted
                                                          : duplicate_rule::first),
      never_used_(c.capacity) {}

void prefix_model::starting(const op& o) {
  (void)o;
  last_ = {}, growing_ = -1;
}

void prefix_model::finished(const op& o) {
  if (leaf_) settle();
  const std::int64_t made = handles() - 1;
  if (o.kind == op_kind::fork && is_live(made) && !prompts_.count(made)) prompts_[made] = prompts_.at(o.seq);
}

prefix_model::chain prefix_model::chain_of(const sequence& s, std::size_t end) const {
  return {s.extra_key, {s.tokens.begin(), s.tokens.begin() + static_cast<std::ptrdiff_t>(end)}};
}

void prefix_model::revive(std::int64_t b) {
  --evictable_count_;
  if (one_queue_) queue_.erase(std::find(queue_.begin(), queue_.end(), b));
  if (!one_queue_ && !leaf_) evictable_.remove(b);
}

void prefix_model::evict(std::int64_t b) {
  cached_block& c = cached_.at(b);
  auto& blocks = registered_.at(c.key);
  blocks.erase(std::find(blocks.begin(), blocks.end(), b));
  if (blocks.empty()) registered_.erase(c.key);
  cached_.erase(b);
  --evictable_count_;  // only a block no table holds leaves the cache
  last_.evicted = true;
}

std::int64_t prefix_model::take_block() {
  if (one_queue_ && never_used_ > 0) {
    --never_used_;
  } else if (one_queue_) {  // the queue's oldest block, registered or not
    const std::int64_t b = queue_.front();
    queue_.pop_front();
    if (b >= 0) {
      last_.evicted_before_free =
          last_.evicted_before_free || std::find(queue_.begin(), queue_.end(), -1) != queue_.end();
      evict(b);
    }
  } else if (!leaf_ && held_blocks() + evictable_count_ == config_.capacity) {
    const std::int64_t victim = evictable_.front();  // no free block: the least recently released goes
    evictable_.pop_front();
    evict(victim);
  }
  return block_pool_model::take_block();
}

std::vector<std::int64_t> prefix_model::find_hit(const std::vector<std::int64_t>& tokens, std::int64_t key) {
  const std::size_t bs = config_.block_size, n = tokens.size();
  const std::size_t limit = all_but_last_ && n > 0 ? n - 1 : n;
  auto found = [&](std::size_t end) {
    const auto it = registered_.find({key, {tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(end)}});
    return it == registered_.end() ? std::int64_t{-1} : it->second.front();  // the earliest still registered
  };
  std::vector<std::int64_t> hits;
  for (std::size_t end = bs; end <= n && found(end) >= 0; end += bs) hits.push_back(found(end));
  const std::size_t registered = hits.size();
  hits.resize(std::min(hits.size(), limit / bs));
  if (drop_last_hit_ && !hits.empty()) hits.pop_back();  // vLLM with EAGLE: never held, so never touched
  last_.hit_stopped_before_last = hits.size() < registered;
  keys_.insert(key);
  for (std::int64_t k : keys_)  // a cache that ignored the key would find the first block under another one
    if (k != key && n >= bs &&
        registered_.count({k, {tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(bs)}})) {
      last_.foreign_key_hit = true;
      note_ = "these tokens are cached under extra key " + std::to_string(k) + ", this create's is " +
              std::to_string(key) + ": a hit across extra keys leaks one tenant's rows to another";
    }
  return hits;
}

void prefix_model::hold_hit(sequence& s, const std::vector<std::int64_t>& hits,
                            const std::vector<std::int64_t>& tokens) {
  for (std::int64_t b : hits) {
    const cached_block& c = cached_.at(b);
    if (hold(b)) revive(b);
    s.blocks.push_back(b);
    for (std::size_t i = 0; i < c.keys.size(); ++i) s.rows.push(c.keys[i], c.values[i]);
    last_.found_second = last_.found_second || c.duplicate;  // its chain's earlier blocks were evicted
  }
  const std::size_t hit = s.rows.size();
  s.tokens.assign(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(hit));
  if (leaf_) stamp_runs(s.blocks);
  if (leaf_ && !s.blocks.empty()) cut_after(s.blocks.back());  // a hit ending inside a run (SGLang's match_prefix)
  hit_rows_ += static_cast<std::int64_t>(hit);
}

void prefix_model::create(const op& o) {
  sequence s = empty_sequence();
  s.extra_key = o.extra_key;
  hold_hit(s, find_hit(o.tokens, o.extra_key), o.tokens);
  prompts_[handles()] = o.tokens;
  add(std::move(s));
}

void prefix_model::filled(sequence& s, std::size_t j) {
  const std::size_t bs = config_.block_size;
  chain key = chain_of(s, (j + 1) * bs);
  const std::int64_t b = s.blocks[j];
  auto found = registered_.find(key);
  last_.duplicate = last_.duplicate || found != registered_.end();
  if (found != registered_.end() && duplicates_ == duplicate_rule::first) return;  // the first stays the entry
  if (found != registered_.end() && duplicates_ == duplicate_rule::adopted) {
    const std::int64_t kept = found->second.front();  // the table takes it in place of its own block
    if (hold(kept)) revive(kept);
    s.blocks[j] = kept;
    drop_ref(b);
    const cached_block& c = cached_.at(kept);
    s.rows.keys.truncate(j * bs), s.rows.values.truncate(j * bs);
    for (std::size_t i = 0; i < bs; ++i) s.rows.push(c.keys[i], c.values[i]);
    return;
  }
  registered_[key].push_back(b);
  cached_block& c = cached_[b];
  c.key = std::move(key), c.duplicate = found != registered_.end();
  for (std::size_t i = j * bs; i < (j + 1) * bs; ++i) {
    const auto k = s.rows.keys.given(i), v = s.rows.values.given(i);
    c.keys.emplace_back(k.begin(), k.end()), c.values.emplace_back(v.begin(), v.end());
  }
  if (leaf_) tree_add(s, j, b);
}

void prefix_model::appended(sequence& s, const op& o, std::size_t from) {
  const std::size_t bs = config_.block_size, end = s.rows.size();
  // An adopted block brings its own rows: the append's later rows are written again after them.
  if (duplicates_ == duplicate_rule::adopted) s.rows.keys.truncate(from), s.rows.values.truncate(from);
  for (std::size_t i = from; i < end; ++i) {
    if (duplicates_ == duplicate_rule::adopted)
      s.rows.push(stored_row(o.k, i - from, profile_.storage), value_row(o, i - from));
    s.tokens.push_back(o.tokens[i - from]);
    if ((i + 1) % bs == 0) filled(s, i / bs);
  }
  if (leaf_) insert_path(s);
  history_.push_back({s.extra_key, s.tokens});
}

void prefix_model::unheld(std::int64_t b) {
  const bool registered = cached_.count(b) != 0;
  if (registered) ++evictable_count_;
  if (one_queue_)
    queue_.push_back(registered ? b : -1);
  else if (registered && !leaf_)
    evictable_.push_back(b);  // else free
}

void prefix_model::releasing(const sequence& s) {
  if (leaf_ && !aborting_) insert_path(s);
}

void prefix_model::count(snapshot& out) const {
  const auto evictable = static_cast<std::int64_t>(evictable_count_);
  out.counters.emplace_back("free_blocks", static_cast<std::int64_t>(available_blocks()) - evictable);
  out.counters.emplace_back("evictable_blocks", evictable);
  out.counters.emplace_back("hit_rows", hit_rows_);
}

}  // namespace kvconform
