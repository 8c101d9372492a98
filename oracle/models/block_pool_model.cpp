// The block-pool specification every pool kind shares, written independently of the caches it judges.
#include "oracle/models/block_pool_model.h"

#include <algorithm>
#include <iterator>
#include <string>

namespace kvconform {

std::vector<std::int64_t> block_pool_model::live() const {
  std::vector<std::int64_t> h;
  for (const auto& entry : seqs_) h.push_back(entry.first);
  return h;
}

bool block_pool_model::replaces(const sequence& s, std::size_t j) const {
  const std::size_t bs = config_.block_size, rows = s.rows.size();
  if (j * bs + bs <= rows) return false;  // full: never written again
  return refs_.at(s.blocks[j]) > 1 || frozen(s.blocks[j]);
}

std::size_t block_pool_model::room(std::int64_t h) const {
  const sequence& s = seqs_.at(h);
  const std::size_t bs = config_.block_size, rows = s.rows.size();
  std::size_t take = available_blocks();
  for (std::size_t j = rows / bs; j < s.blocks.size(); ++j)  // entries it writes into, each replaced if it must be
    if (replaces(s, j) && take-- == 0) return std::max(j * bs, rows) - rows;
  return (s.blocks.size() + take) * bs - rows;
}

bool block_pool_model::copies_on_append(std::int64_t h) const {
  const sequence& s = seqs_.at(h);
  return s.rows.size() % config_.block_size != 0 && replaces(s, s.rows.size() / config_.block_size);
}

bool block_pool_model::shares_last_block(std::int64_t h) const {
  const sequence& s = seqs_.at(h);
  return s.rows.size() % config_.block_size != 0 && refs_.at(s.blocks[s.rows.size() / config_.block_size]) > 1;
}

std::size_t block_pool_model::kept_blocks(std::int64_t h) const {
  const sequence& s = seqs_.at(h);
  return s.blocks.size() - (s.rows.size() + config_.block_size - 1) / config_.block_size;
}

std::pair<std::vector<std::size_t>, std::size_t> block_pool_model::append_blocks(std::int64_t h,
                                                                                 std::size_t steps) const {
  const sequence& s = seqs_.at(h);
  const std::size_t bs = config_.block_size, rows = s.rows.size(), last = (rows + steps - 1) / bs;
  std::vector<std::size_t> replaced;
  for (std::size_t j = rows / bs; j <= last && j < s.blocks.size(); ++j)
    if (replaces(s, j)) replaced.push_back(j);
  return {replaced, last + 1 > s.blocks.size() ? last + 1 - s.blocks.size() : 0};
}

void block_pool_model::drop_ref(std::int64_t b) {
  if (--refs_.at(b) > 0) return;
  refs_.erase(b);
  unheld(b);
}

std::int64_t block_pool_model::take_block() {
  refs_[blocks_made_] = 1;
  return blocks_made_++;
}

void block_pool_model::release(std::int64_t h) {
  const sequence& s = seqs_.at(h);
  releasing(s);
  for (auto b = s.blocks.rbegin(); b != s.blocks.rend(); ++b) drop_ref(*b);
  seqs_.erase(h);
}

expectation block_pool_model::append(const op& o) {
  expectation e;
  const auto steps = steps_of(o);
  if (!is_live(o.seq)) e.accepted = false, e.reasons |= refuse_index;
  if (!steps || !well_formed(o, *steps)) e.accepted = false, e.reasons |= refuse_shape;
  if (!e.accepted || *steps == 0) return e;
  if (room(o.seq) < *steps && !make_room(o, *steps, e)) return {.accepted = false, .reasons = refuse_capacity};
  // Every block the append needs is taken before any row is written, so that a kind that evicts
  // to take one (prefix) has done so before the rows it writes are found again.
  const auto [replaced, added] = append_blocks(o.seq, *steps);
  taking(replaced.size() + added);
  std::vector<std::int64_t> fresh;
  for (std::size_t i = 0; i < replaced.size() + added; ++i) fresh.push_back(take_block());
  sequence& s = seqs_.at(o.seq);
  const std::size_t from = s.rows.size();
  auto next = fresh.begin();
  for (std::size_t j : replaced) {  // another table still holds the old block, or the kind keeps it as it is
    const std::int64_t old = s.blocks[j];
    s.blocks[j] = *next++;
    drop_ref(old);
  }
  while (next != fresh.end()) s.blocks.push_back(*next++);
  for (std::size_t i = 0; i < *steps; ++i) s.rows.push(stored_row(o.k, i, profile_.storage), value_row(o, i));
  appended(s, o, from);
  return e;
}

expectation block_pool_model::prefill(const op& o) {
  const auto steps = steps_of(o);
  if (!steps || !prefill_queries(o, *steps))
    return {.accepted = false, .reasons = refuse_shape | (is_live(o.seq) ? 0u : unsigned{refuse_index})};
  const std::size_t before = is_live(o.seq) ? size(o.seq) : 0;  // a dead handle: the append refuses it
  expectation e = append(o);
  if (e.accepted && *steps > 0) prefill_problems(o, before, e);
  return e;
}

bool block_pool_model::prefill_queries(const op& o, std::size_t steps) const {
  return o.q.shape.size() == 2 && o.q.shape[0] == steps && o.q.shape[1] == config_.d_k;
}

void block_pool_model::prefill_problems(const op& o, std::size_t before, expectation& e) const {
  // Query i sits at row before + i and sees every row up to its own (docs/design.md §2.3).
  const auto it = seqs_.find(o.seq);
  const std::size_t stream = static_cast<std::size_t>(std::distance(seqs_.begin(), it));
  add_prefill(e, it->second.rows, stream, o.q, before, profile_);
}

expectation block_pool_model::rollback(const op& o) {
  if (!is_live(o.seq) || o.count < 0 || static_cast<std::size_t>(o.count) > size(o.seq))
    return {.accepted = false, .reasons = refuse_index};
  sequence& s = seqs_.at(o.seq);
  const std::size_t rows = s.rows.size() - static_cast<std::size_t>(o.count), bs = config_.block_size;
  s.rows.keys.truncate(rows), s.rows.values.truncate(rows);
  if (s.tokens.size() > rows) s.tokens.resize(rows);
  while (!keep_rolled_back_ && s.blocks.size() > (rows + bs - 1) / bs) {
    const std::int64_t b = s.blocks.back();
    s.blocks.pop_back();
    drop_ref(b);
  }
  rolled_back(s);
  return {};
}

expectation block_pool_model::fork(const op& o) {
  const std::int64_t child = handles_++;  // a refused fork still uses up its handle
  if (!is_live(o.seq)) return {.accepted = false, .reasons = refuse_index};
  sequence& copy = seqs_.emplace(child, seqs_.at(o.seq)).first->second;
  copy.blocks.resize((copy.rows.size() + config_.block_size - 1) / config_.block_size);  // not the blocks it keeps
  for (std::int64_t b : copy.blocks) ++refs_.at(b);
  return {};
}

expectation block_pool_model::decode(const op& o) const {
  expectation e;
  auto refuse = [&](unsigned why) { e.accepted = false, e.reasons |= why; };
  const auto it = seqs_.find(o.seq);
  if (it == seqs_.end()) refuse(refuse_index);
  if (o.q.shape.size() != 1 || o.q.shape[0] != config_.d_k) refuse(refuse_shape);
  if (it != seqs_.end() && it->second.rows.size() == 0) refuse(refuse_empty);
  if (!e.accepted) return e;
  std::vector<double> q;
  for (double x : o.q.data) q.push_back(round_to(profile_.storage, x));
  // Streams are in handle order, so a sequence's place among the live ones is its stream's index.
  add_decode(e, it->second.rows, static_cast<std::size_t>(std::distance(seqs_.begin(), it)), std::move(q), profile_);
  return e;
}

expectation block_pool_model::apply(const op& o) {
  // Declared attention (docs/numerics.md §7): a decode or prefill of a cache declaring learned sinks carries one logit.
  const bool attends = o.kind == op_kind::decode || o.kind == op_kind::prefill;
  if (attends && !sinks_fit(profile_, o.sinks, 1))
    return {.accepted = false, .reasons = refuse_shape | (is_live(o.seq) ? 0u : unsigned{refuse_index})};
  starting(o);
  expectation e = apply_op(o);
  if (attends) stamp_attention(e, profile_, o.sinks, e.problems.size());
  finished(o);
  e.note = std::move(note_), note_.clear();
  drafts_ = o.kind == op_kind::prefill && e.accepted ? steps_of(o).value_or(0) : 0;
  return e;
}

bool block_pool_model::malformed(const op& o) const {
  const auto steps = steps_of(o);
  return !steps || !well_formed(o, *steps) || (o.kind == op_kind::prefill && !prefill_queries(o, *steps));
}

expectation block_pool_model::apply_op(const op& o) {
  if (auto own = own_op(o)) return std::move(*own);
  switch (o.kind) {
    case op_kind::create: return create(o), expectation{};
    case op_kind::fork: return fork(o);
    case op_kind::release:
      if (!is_live(o.seq)) return {.accepted = false, .reasons = refuse_index};
      release(o.seq);
      return {};
    case op_kind::append: return append(o);
    case op_kind::prefill: return prefill(o);
    case op_kind::rollback: return rollback(o);
    case op_kind::decode: return decode(o);
    default: return {.accepted = false, .reasons = refuse_none};  // update and reorder belong to beam: never acceptable
  }
}

snapshot block_pool_model::observe() const {
  snapshot out;
  out.streams.reserve(seqs_.size());
  for (const auto& [h, s] : seqs_) {
    stream st;
    st.name = "seq " + std::to_string(h);
    st.d_k = config_.d_k, st.d_v = config_.d_v;
    s.rows.expose(st);
    st.blocks = s.blocks;
    out.streams.push_back(std::move(st));
  }
  count(out);
  out.block_refs.assign(refs_.begin(), refs_.end());
  return out;
}

}  // namespace kvconform
