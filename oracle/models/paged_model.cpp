// The paged specification, written independently of the caches it judges.
#include "oracle/models/paged_model.h"

#include "oracle/models/sequence_decode.h"

#include <iterator>
#include <string>

namespace kvconform {

std::vector<std::int64_t> paged_model::live() const {
  std::vector<std::int64_t> h;
  for (const auto& entry : seqs_) h.push_back(entry.first);
  return h;
}

std::size_t paged_model::room(std::int64_t h) const {
  // The sequence may grow to fill its own blocks plus every free one, less the one a
  // copy-on-write of a shared, partly filled last block would take.
  const sequence& s = seqs_.at(h);
  const std::int64_t bs = static_cast<std::int64_t>(config_.block_size), len = static_cast<std::int64_t>(s.rows.size());
  const auto free = static_cast<std::int64_t>(free_blocks());
  const std::int64_t most =
      (static_cast<std::int64_t>(s.blocks.size()) + free - (copies_on_append(h) ? 1 : 0)) * bs - len;
  return most > 0 ? static_cast<std::size_t>(most) : 0;
}

bool paged_model::copies_on_append(std::int64_t h) const {
  const sequence& s = seqs_.at(h);
  return s.rows.size() % config_.block_size != 0 && refs_.at(s.blocks.back()) > 1;
}

std::int64_t paged_model::new_block() {
  refs_[blocks_made_] = 1;
  return blocks_made_++;
}

void paged_model::drop(std::int64_t h) {
  for (std::int64_t b : seqs_.at(h).blocks)
    if (--refs_.at(b) == 0) refs_.erase(b);
  seqs_.erase(h);
}

expectation paged_model::append(const op& o) {
  expectation e;
  const auto steps = append_steps(o, config_.d_k, config_.d_v);
  if (!is_live(o.seq)) e.accepted = false, e.reasons |= refuse_index;
  if (!steps) e.accepted = false, e.reasons |= refuse_shape;
  if (!e.accepted || *steps == 0) return e;
  const std::size_t n = *steps;
  if (room(o.seq) < n) {
    if (!config_.preempt) return {.accepted = false, .reasons = refuse_capacity};
    // Preemption: release the newest other sequences one at a time, on a trial copy, until
    // the rows fit; if they never do, nothing is released and the append is refused.
    paged_model trial = *this;
    std::vector<std::int64_t> victims;
    for (auto it = seqs_.rbegin(); it != seqs_.rend() && trial.room(o.seq) < n; ++it)
      if (it->first != o.seq) victims.push_back(it->first), trial.drop(it->first);
    if (trial.room(o.seq) < n) return {.accepted = false, .reasons = refuse_capacity};
    *this = std::move(trial);
    e.preempted = std::move(victims);
  }
  sequence& s = seqs_.at(o.seq);
  const std::size_t bs = config_.block_size;
  if (copies_on_append(o.seq)) {
    --refs_.at(s.blocks.back());
    s.blocks.back() = new_block();
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (s.rows.size() % bs == 0) s.blocks.push_back(new_block());
    s.rows.push(stored_row(o.k, i, profile_.storage), stored_row(o.v, i, profile_.storage));
  }
  return e;
}

expectation paged_model::apply(const op& o) {
  const expectation refused_index{.accepted = false, .reasons = refuse_index};
  switch (o.kind) {
    case op_kind::create:
      seqs_.emplace(handles_++, sequence{{profile_.keys, profile_.values, config_, config_.d_k, config_.d_v}, {}});
      return {};
    case op_kind::fork: {
      const std::int64_t child = handles_++;  // a refused fork still uses up its handle
      if (!is_live(o.seq)) return refused_index;
      seqs_.emplace(child, seqs_.at(o.seq));
      for (std::int64_t b : seqs_.at(child).blocks) ++refs_.at(b);
      return {};
    }
    case op_kind::release:
      if (!is_live(o.seq)) return refused_index;
      drop(o.seq);
      return {};
    case op_kind::append: return append(o);
    case op_kind::decode: return sequence_decode(o, seqs_, config_.d_k, profile_);
    default: return {.accepted = false, .reasons = refuse_none};  // update and reorder belong to beam: never acceptable
  }
}

snapshot paged_model::observe() const {
  snapshot out;
  for (const auto& [h, s] : seqs_) {
    stream st;
    st.name = "seq " + std::to_string(h);
    st.d_k = config_.d_k, st.d_v = config_.d_v;
    s.rows.expose(st);
    st.blocks = s.blocks;
    out.streams.push_back(std::move(st));
  }
  const auto held = static_cast<std::int64_t>(refs_.size());
  out.counters.emplace_back("free_blocks", static_cast<std::int64_t>(free_blocks()));
  const double block_bytes = stored_bytes(profile_.keys, config_.block_size, config_.d_k) +
                             stored_bytes(profile_.values, config_.block_size, config_.d_v);
  out.counters.emplace_back("bytes_in_use", held * static_cast<std::int64_t>(block_bytes));
  out.block_refs.assign(refs_.begin(), refs_.end());
  return out;
}

}  // namespace kvconform
