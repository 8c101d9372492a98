// The prefix specification, written independently of the caches it judges.
#include "oracle/models/prefix_model.h"

#include <iterator>

namespace kvconform {

std::int64_t prefix_model::take_block() {
  if (held_blocks() + evictable_.size() == config_.capacity) {
    const std::int64_t victim = evictable_.front();
    evictable_.pop_front();
    registered_.erase(cached_.at(victim).prefix);
    cached_.erase(victim);
  }
  return block_pool_model::take_block();
}

void prefix_model::register_if_full(const sequence& s) {
  const std::size_t n = s.tokens.size(), bs = config_.block_size;
  if (n % bs != 0) return;
  const std::int64_t block = s.blocks[n / bs - 1];
  std::vector<std::int64_t> prefix(s.tokens.begin(), s.tokens.end());
  if (!registered_.emplace(prefix, block).second) return;  // the first block with this prefix stays the cache's
  cached_block& c = cached_[block];
  c.prefix = std::move(prefix);
  for (std::size_t i = n - bs; i < n; ++i) {
    const auto k = s.rows.keys.given(i), v = s.rows.values.given(i);
    c.keys.emplace_back(k.begin(), k.end()), c.values.emplace_back(v.begin(), v.end());
  }
}

void prefix_model::create(const op& o) {
  sequence s = empty_sequence();
  const std::size_t bs = config_.block_size;
  for (std::size_t end = bs; end <= o.tokens.size(); end += bs) {
    const auto found = registered_.find(
        std::vector<std::int64_t>(o.tokens.begin(), o.tokens.begin() + static_cast<std::ptrdiff_t>(end)));
    if (found == registered_.end()) break;
    const cached_block& c = cached_.at(found->second);
    if (hold(found->second)) evictable_.remove(found->second);
    s.blocks.push_back(found->second);
    for (std::size_t i = 0; i < c.keys.size(); ++i) s.rows.push(c.keys[i], c.values[i]);
  }
  s.tokens.assign(o.tokens.begin(), o.tokens.begin() + static_cast<std::ptrdiff_t>(s.rows.size()));
  hit_rows_ += static_cast<std::int64_t>(s.rows.size());
  add(std::move(s));
}

void prefix_model::appended(sequence& s, const op& o, std::size_t from) {
  for (std::size_t i = from; i < s.rows.size(); ++i) {
    s.tokens.push_back(o.tokens[i - from]);
    register_if_full(s);
  }
  history_.push_back(s.tokens);
}

void prefix_model::unheld(std::int64_t b) {
  if (cached_.count(b)) evictable_.push_back(b);  // else free
}

void prefix_model::count(snapshot& out) const {
  const auto evictable = static_cast<std::int64_t>(evictable_.size());
  out.counters.emplace_back("free_blocks", static_cast<std::int64_t>(available_blocks()) - evictable);
  out.counters.emplace_back("evictable_blocks", evictable);
  out.counters.emplace_back("hit_rows", hit_rows_);
}

}  // namespace kvconform
