// The prefix specification, written independently of the caches it judges.
#include "oracle/models/prefix_model.h"

#include "oracle/models/sequence_decode.h"

#include <algorithm>
#include <iterator>
#include <string>

namespace kvconform {

std::vector<std::int64_t> prefix_model::live() const {
  std::vector<std::int64_t> h;
  for (const auto& entry : seqs_) h.push_back(entry.first);
  return h;
}

bool prefix_model::copies_on_append(const sequence& s) const {
  return s.tokens.size() % config_.block_size != 0 && refs_.at(s.blocks.back()) > 1;
}

std::size_t prefix_model::room(std::int64_t h) const {
  const sequence& s = seqs_.at(h);
  const auto blocks = static_cast<std::int64_t>(s.blocks.size() + available_blocks()) - (copies_on_append(s) ? 1 : 0);
  const auto most = blocks * static_cast<std::int64_t>(config_.block_size) - static_cast<std::int64_t>(s.tokens.size());
  return most > 0 ? static_cast<std::size_t>(most) : 0;
}

void prefix_model::hold(std::int64_t block) {
  if (refs_[block]++ == 0) evictable_.remove(block);
}

/// A block for new rows: a free one when there is one, else the least recently released evictable
/// one, which leaves the cache (its prefix is no longer found).
std::int64_t prefix_model::take_block() {
  const std::size_t free = config_.capacity - refs_.size() - evictable_.size();
  if (free == 0) {
    const std::int64_t victim = evictable_.front();
    evictable_.pop_front();
    registered_.erase(cached_.at(victim).prefix);
    cached_.erase(victim);
  }
  refs_[blocks_made_] = 1;
  return blocks_made_++;
}

void prefix_model::register_if_full(const sequence& s) {
  const std::size_t n = s.tokens.size(), bs = config_.block_size;
  if (n % bs != 0) return;
  std::vector<std::int64_t> prefix(s.tokens.begin(), s.tokens.end());
  if (!registered_.emplace(prefix, s.blocks.back()).second)
    return;  // the first block with this prefix stays the cache's
  cached_block& c = cached_[s.blocks.back()];
  c.prefix = std::move(prefix);
  for (std::size_t i = n - bs; i < n; ++i) {
    const auto k = s.rows.keys.given(i), v = s.rows.values.given(i);
    c.keys.emplace_back(k.begin(), k.end()), c.values.emplace_back(v.begin(), v.end());
  }
}

expectation prefix_model::create(const op& o) {
  sequence s = empty_sequence();
  const std::size_t bs = config_.block_size;
  for (std::size_t end = bs; end <= o.tokens.size(); end += bs) {
    const auto found = registered_.find(
        std::vector<std::int64_t>(o.tokens.begin(), o.tokens.begin() + static_cast<std::ptrdiff_t>(end)));
    if (found == registered_.end()) break;
    const cached_block& c = cached_.at(found->second);
    hold(found->second);
    s.blocks.push_back(found->second);
    for (std::size_t i = 0; i < c.keys.size(); ++i) s.rows.push(c.keys[i], c.values[i]);
  }
  s.tokens.assign(o.tokens.begin(), o.tokens.begin() + static_cast<std::ptrdiff_t>(s.rows.size()));
  hit_rows_ += static_cast<std::int64_t>(s.rows.size());
  seqs_.emplace(handles_++, std::move(s));
  return {};
}

expectation prefix_model::append(const op& o) {
  expectation e;
  const auto steps = append_steps(o, config_.d_k, config_.d_v);
  if (!is_live(o.seq)) e.accepted = false, e.reasons |= refuse_index;
  if (!steps || o.tokens.size() != *steps) e.accepted = false, e.reasons |= refuse_shape;
  if (!e.accepted || *steps == 0) return e;
  if (room(o.seq) < *steps) return {.accepted = false, .reasons = refuse_capacity};
  // Every block the append needs is taken (evicting as needed) before any row is written, so a
  // block filled by this append registers even when an eviction here freed its prefix.
  sequence& s = seqs_.at(o.seq);
  const std::size_t bs = config_.block_size, copy = copies_on_append(s) ? 1 : 0;
  const std::size_t room = s.blocks.size() * bs - s.tokens.size();
  std::vector<std::int64_t> fresh;
  for (std::size_t i = 0; i < copy + (*steps > room ? (*steps - room + bs - 1) / bs : 0); ++i)
    fresh.push_back(take_block());
  auto next = fresh.begin();
  if (copy) --refs_.at(s.blocks.back()), s.blocks.back() = *next++;  // the old block is still held by another table
  for (std::size_t i = 0; i < *steps; ++i) {
    if (s.tokens.size() % bs == 0) s.blocks.push_back(*next++);
    s.rows.push(stored_row(o.k, i, profile_.storage), stored_row(o.v, i, profile_.storage));
    s.tokens.push_back(o.tokens[i]);
    register_if_full(s);
  }
  history_.push_back(s.tokens);
  return e;
}

void prefix_model::release(std::int64_t h) {
  const sequence& s = seqs_.at(h);
  for (auto b = s.blocks.rbegin(); b != s.blocks.rend(); ++b) {
    if (--refs_.at(*b) > 0) continue;
    refs_.erase(*b);
    if (cached_.count(*b)) evictable_.push_back(*b);  // else free
  }
  seqs_.erase(h);
}

expectation prefix_model::apply(const op& o) {
  const expectation refused_index{.accepted = false, .reasons = refuse_index};
  switch (o.kind) {
    case op_kind::create: return create(o);
    case op_kind::fork: {
      const std::int64_t child = handles_++;  // a refused fork still uses up its handle
      if (!is_live(o.seq)) return refused_index;
      seqs_.emplace(child, seqs_.at(o.seq));
      for (std::int64_t b : seqs_.at(child).blocks) ++refs_.at(b);
      return {};
    }
    case op_kind::release:
      if (!is_live(o.seq)) return refused_index;
      release(o.seq);
      return {};
    case op_kind::append: return append(o);
    case op_kind::decode: return sequence_decode(o, seqs_, config_.d_k, profile_);
    default: return {.accepted = false, .reasons = refuse_none};  // not in the prefix vocabulary
  }
}

snapshot prefix_model::observe() const {
  snapshot out;
  for (const auto& [h, s] : seqs_) {
    stream st;
    st.name = "seq " + std::to_string(h);
    st.d_k = config_.d_k, st.d_v = config_.d_v;
    s.rows.expose(st);
    st.blocks = s.blocks;
    out.streams.push_back(std::move(st));
  }
  const auto evictable = static_cast<std::int64_t>(evictable_.size());
  out.counters.emplace_back("free_blocks", static_cast<std::int64_t>(available_blocks()) - evictable);
  out.counters.emplace_back("evictable_blocks", evictable);
  out.counters.emplace_back("hit_rows", hit_rows_);
  out.block_refs.assign(refs_.begin(), refs_.end());
  return out;
}

}  // namespace kvconform
