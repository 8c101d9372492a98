// The flat, ring and growing specification, written independently of the caches it judges.
#include "oracle/models/rows_model.h"

#include <algorithm>
#include <string>

#include "oracle/numeric/top_k.h"

namespace kvconform {

bool rows_model::sees(std::int64_t row, std::int64_t query) const {
  if (row > query) return false;  // causal: a query sees its own step and the ones before
  // A declared window or chunk (docs/numerics.md §7.2) masks within the rows the cache holds.
  if (!profile_.attention.sees(static_cast<std::size_t>(query), static_cast<std::size_t>(row))) return false;
  if (rule_ != full::evict) return true;
  // A window at the query's step holds the sinks and the last W - keep of the rest (docs/kinds/ring.md).
  const auto keep = static_cast<std::int64_t>(config_.keep), w = static_cast<std::int64_t>(config_.capacity);
  return row < keep || row > query - (w - keep);
}

std::size_t rows_model::held_limit() const {
  return rule_ == full::evict ? config_.capacity + config_.reserve : config_.capacity;
}

void rows_model::push(const op& o, std::size_t i) {
  if (rule_ == full::evict && size() == held_limit()) {  // the oldest row after the sinks goes
    const std::size_t oldest = config_.keep;
    rows_.keys.erase(oldest), rows_.values.erase(oldest);
    positions_.erase(positions_.begin() + static_cast<std::ptrdiff_t>(oldest));
  }
  rows_.push(stored_row(o.k, i, profile_.storage), stored_row(o.v, i, profile_.storage));
  positions_.push_back(total_++);
  if (const attention_semantics& a = profile_.attention; a.top_k > 0)  // flat only: no row is ever evicted
    index_rows_.push_back(stored_index_row(a, o.index_k.data.data() + i * a.index_width));
}

bool rows_model::can_roll_back(std::int64_t n) const {
  if (n < 0 || n > total_) return false;  // steps, not rows: a window's evicted steps count too
  if (rule_ != full::evict) return true;
  if (before_full_) return total_ < static_cast<std::int64_t>(config_.capacity);
  // Every row the window at the earlier step attends must still be held (docs/kinds/ring.md, rollback).
  const std::int64_t t = total_ - n, keep = static_cast<std::int64_t>(config_.keep);
  const std::int64_t first_needed = std::max(keep, t - static_cast<std::int64_t>(config_.capacity) + keep);
  if (first_needed >= t) return true;  // only sinks (or nothing) needed
  const auto oldest = std::find_if(positions_.begin(), positions_.end(), [&](std::int64_t p) { return p >= keep; });
  return first_needed >= (oldest == positions_.end() ? total_ : *oldest);
}

std::vector<unsigned char> rows_model::live_for(std::int64_t query, const std::vector<std::int64_t>& positions) const {
  std::vector<unsigned char> live(positions.size());
  bool all = true;
  for (std::size_t j = 0; j < positions.size(); ++j) all = (live[j] = sees(positions[j], query)) && all;
  return all ? std::vector<unsigned char>{} : live;  // empty: every row attends, as a plain decode
}

void rows_model::prefill(const op& o, std::size_t m, expectation& e) {
  // Every row a query of the chunk may see: the rows held before it, then the chunk's own, each kept as stored
  // and as given when it arrives (a long chunk evicts rows its early queries attend, docs/numerics.md §3.7).
  const std::size_t dk = config_.d_k, dv = config_.d_v, before = size();
  std::vector<std::int64_t> positions(positions_.begin(), positions_.end());
  std::vector<double> keys, values, given_keys, given_values;
  auto take = [&](std::size_t r) {
    for (auto [out, row] : {std::pair{&keys, rows_.keys.stored(r)},
                            {&values, rows_.values.stored(r)},
                            {&given_keys, rows_.keys.given(r)},
                            {&given_values, rows_.values.given(r)}})
      out->insert(out->end(), row.begin(), row.end());
  };
  for (std::size_t r = 0; r < before; ++r) take(r);
  for (std::size_t i = 0; i < m; ++i) {
    push(o, i);
    positions.push_back(total_ - 1);
    take(size() - 1);
  }
  // Integer groups: a decode attends the values the cache exposes; rows a chunk appended and evicted again were
  // never exposed, so then the numbers are not judged (docs/numerics.md §3.7), only shapes and masks.
  const bool grouped = profile_.keys.groups || profile_.values.groups;
  e.judge_numbers = !(grouped && positions.size() != size());
  const std::size_t n = positions.size();
  const shared_doubles k(std::move(keys)), v(std::move(values)), gk(std::move(given_keys)),
      gv(std::move(given_values));  // one block each, shared by the m problems
  for (std::size_t i = 0; i < m; ++i) {
    attention_problem p;
    p.n = n, p.d_k = dk, p.d_v = dv, p.keys = k, p.values = v;
    for (std::size_t j = 0; j < dk; ++j) p.q.push_back(round_to(profile_.storage, o.q.data[i * dk + j]));
    p.live = live_for(total_ - static_cast<std::int64_t>(m - i), positions);
    if (profile_.rounds_storage()) {
      attention_problem g = p;
      g.keys = gk, g.values = gv;
      e.originals.push_back(std::move(g));
    }
    e.problems.push_back(std::move(p));
    e.streams.push_back(0);
  }
}

expectation rows_model::apply(const op& o) {
  const bool attends = o.kind == op_kind::decode || o.kind == op_kind::prefill;
  if (attends && !sinks_fit(profile_, o.sinks, 1)) return {.accepted = false, .reasons = refuse_shape};
  if (const auto steps = append_steps(o, config_.d_k, config_.d_v);
      o.kind != op_kind::rollback && !index_inputs_fit(profile_, o, steps.value_or(0)))
    return {.accepted = false, .reasons = refuse_shape};
  expectation e = apply_op(o);
  stamp_attention(e, profile_, o.sinks, e.problems.size());
  if (attends && e.accepted) choose_top_k(e, profile_, o, index_rows_);
  drafts_ = o.kind == op_kind::prefill && e.accepted ? e.problems.size() : 0;
  return e;
}

expectation rows_model::apply_op(const op& o) {
  expectation e;
  auto refuse = [&](unsigned why) {
    e.accepted = false;
    e.reasons |= why;
  };
  if (o.kind == op_kind::append || o.kind == op_kind::prefill) {
    const auto steps = append_steps(o, config_.d_k, config_.d_v);
    const bool queries = o.kind == op_kind::append ||
                         (o.q.shape.size() == 2 && steps && o.q.shape[0] == *steps && o.q.shape[1] == config_.d_k);
    if (!steps || !queries)
      refuse(refuse_shape);
    else if (rule_ == full::refuse && size() + *steps > config_.capacity)
      refuse(refuse_capacity);
    if (!e.accepted) return e;
    if (o.kind == op_kind::prefill) {
      prefill(o, *steps, e);
      return e;
    }
    // Row by row: a 2-D append is the same steps one at a time. A window first evicts the oldest
    // row to make room, so a chunk that completes is quantized over the rows the window then holds.
    for (std::size_t i = 0; i < *steps; ++i) push(o, i);
    return e;
  }
  if (o.kind == op_kind::rollback) {
    if (!can_roll_back(o.count)) refuse(refuse_index);
    if (!e.accepted) return e;
    total_ -= o.count;
    const auto kept = static_cast<std::size_t>(
        std::find_if(positions_.begin(), positions_.end(), [&](std::int64_t p) { return p >= total_; }) -
        positions_.begin());
    rows_.keys.truncate(kept), rows_.values.truncate(kept);
    positions_.resize(kept);
    index_rows_.resize(std::min(index_rows_.size(), kept));
    return e;
  }
  if (o.kind != op_kind::decode) {  // an op outside the family's vocabulary: the trace codec refuses it first
    refuse(refuse_shape);
    return e;
  }
  if (o.q.shape.size() != 1 || o.q.shape[0] != config_.d_k) refuse(refuse_shape);
  if (size() == 0) refuse(refuse_empty);
  if (!e.accepted) return e;
  std::vector<double> q;
  for (double x : o.q.data) q.push_back(round_to(profile_.storage, x));
  // A window with a reserve holds rows beyond the window; a decode attends the window alone.
  add_decode(e, rows_, 0, std::move(q), profile_,
             live_for(total_ - 1, std::vector<std::int64_t>(positions_.begin(), positions_.end())));
  return e;
}

snapshot rows_model::observe() const {
  snapshot s;
  stream st;
  st.d_k = config_.d_k, st.d_v = config_.d_v;
  rows_.expose(st);
  s.counters.emplace_back("size", static_cast<std::int64_t>(size()));
  if (rule_ == full::evict) {
    st.positions.assign(positions_.begin(), positions_.end());
    s.counters.emplace_back("total", total_);
  }
  if (rule_ == full::grow) {  // whole steps of `capacity` rows, none before the first append
    const std::size_t step = config_.capacity;
    s.counters.emplace_back("reserved_rows", static_cast<std::int64_t>((size() + step - 1) / step * step));
  }
  s.streams.push_back(std::move(st));
  return s;
}

}  // namespace kvconform
