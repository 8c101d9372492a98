// The prefix model's scheduler phases: lookup, admit, retract and abort (docs/kinds/prefix.md "Phases").
#include <algorithm>

#include "oracle/models/prefix_model.h"

namespace kvconform {

std::optional<expectation> prefix_model::own_op(const op& o) {
  switch (o.kind) {
    case op_kind::lookup: return lookup(o);
    case op_kind::admit: return admit(o);
    case op_kind::retract: return retract(o);
    case op_kind::abort: return abort(o);
    case op_kind::release:
      if (is_live(o.seq)) prompts_.erase(o.seq), waiting_.erase(o.seq), looked_up_.erase(o.seq);
      return std::nullopt;  // the pool's release, with its insert
    case op_kind::append:
    case op_kind::prefill:
    case op_kind::decode:
    case op_kind::fork:
    case op_kind::rollback: {
      if (!waiting(o.seq)) return std::nullopt;
      // A waiting sequence runs nothing until admitted; a malformed op may be refused for its shape first.
      unsigned why = refuse_index;
      if ((o.kind == op_kind::append || o.kind == op_kind::prefill) && malformed(o)) why |= refuse_shape;
      if (o.kind == op_kind::decode && (o.q.shape.size() != 1 || o.q.shape[0] != config_.d_k)) why |= refuse_shape;
      if (o.kind == op_kind::fork) skip_handle();  // a refused fork still uses up its handle
      return expectation{.accepted = false, .reasons = why};
    }
    default: return std::nullopt;
  }
}

expectation prefix_model::lookup(const op& o) {
  const std::vector<std::int64_t> hits = find_hit(o.tokens, o.extra_key);
  last_.divergence = divergence(o.tokens, hits.size(), o.extra_key);
  // SGLang's match_prefix: every node it walks is used now, and the one the match ends inside is split there.
  if (leaf_) stamp_runs(hits);
  if (leaf_ && !hits.empty()) cut_after(hits.back());
  const std::int64_t h = handles();
  sequence s = empty_sequence();
  s.extra_key = o.extra_key;
  add(std::move(s));
  prompts_[h] = o.tokens, waiting_.insert(h), looked_up_[h] = hits.size() * config_.block_size;
  return {};
}

expectation prefix_model::admit(const op& o) {
  if (!waiting(o.seq) || o.count < 0) return {.accepted = false, .reasons = refuse_index};
  sequence& s = at(o.seq);
  const std::vector<std::int64_t>& tokens = prompts_.at(o.seq);
  const std::vector<std::int64_t> hits = find_hit(tokens, s.extra_key);
  const std::size_t bs = config_.block_size, hit = hits.size() * bs;
  const auto count = static_cast<std::size_t>(o.count);
  const std::size_t need = count / bs + (count % bs != 0);  // the hit ends on a block boundary
  const auto reviving =
      static_cast<std::size_t>(std::count_if(hits.begin(), hits.end(), [&](std::int64_t b) { return !held(b); }));
  if (need > available_blocks() - reviving) return {.accepted = false, .reasons = refuse_capacity};
  last_.hit_lost = looked_up_.at(o.seq) > hit, last_.admitted_hit = hit;
  hold_hit(s, hits, tokens);  // the lock on its path comes before the allocation that may evict
  waiting_.erase(o.seq), looked_up_.erase(o.seq);
  taking(need);
  for (std::size_t i = 0; i < need; ++i) s.blocks.push_back(take_block());
  return {};
}

expectation prefix_model::retract(const op& o) {
  if (!is_live(o.seq) || waiting(o.seq)) return {.accepted = false, .reasons = refuse_index};
  sequence& s = at(o.seq);
  last_.retract_mid_prefill = s.rows.size() > 0 && kept_blocks(o.seq) > 0;
  std::vector<std::int64_t> p = s.tokens;
  const auto& old = prompts_.at(o.seq);
  if (old.size() > p.size()) p.insert(p.end(), old.begin() + static_cast<std::ptrdiff_t>(p.size()), old.end());
  prompts_[o.seq] = std::move(p);
  const std::vector<std::int64_t> blocks = s.blocks;
  const std::int64_t key = s.extra_key;
  s = empty_sequence();
  s.extra_key = key;
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) drop_ref(*b);
  waiting_.insert(o.seq), looked_up_[o.seq] = 0;
  return {};
}

expectation prefix_model::abort(const op& o) {
  if (!is_live(o.seq)) return {.accepted = false, .reasons = refuse_index};
  last_.aborted_waiting = waiting(o.seq);
  aborting_ = true;  // no insert: nothing used (SGLang's release without insert)
  release(o.seq);
  aborting_ = false;
  prompts_.erase(o.seq), waiting_.erase(o.seq), looked_up_.erase(o.seq);
  return {};
}

int prefix_model::divergence(const std::vector<std::int64_t>& tokens, std::size_t hit_blocks, std::int64_t key) const {
  const std::size_t bs = config_.block_size, start = hit_blocks * bs;
  if (tokens.size() <= start) return -1;
  const std::size_t end = std::min(start + bs, tokens.size());
  const chain from{key, {tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(start)}};
  int best = -1;
  // The chains continuing the hit sit together in the map's order, from the hit's own chain on.
  for (auto it = registered_.lower_bound(from); it != registered_.end(); ++it) {
    const auto& [k, t] = it->first;
    if (k != key || t.size() < start || !std::equal(from.second.begin(), from.second.end(), t.begin())) break;
    if (t.size() != start + bs) continue;
    std::size_t same = start;
    while (same < end && t[same] == tokens[same]) ++same;
    if (same == end) return -1;  // the prompt follows a cached block as far as it goes
    best = std::max(best, static_cast<int>(same - start));
  }
  return best;
}

std::size_t prefix_model::protected_blocks() const {
  return static_cast<std::size_t>(
      std::count_if(cached_.begin(), cached_.end(), [&](const auto& entry) { return held(entry.first); }));
}

}  // namespace kvconform
