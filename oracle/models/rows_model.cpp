// The flat, ring and growing specification, written independently of the caches it judges.
#include "oracle/models/rows_model.h"

#include <string>

namespace kvconform {

expectation rows_model::apply(const op& o) {
  expectation e;
  auto refuse = [&](unsigned why) {
    e.accepted = false;
    e.reasons |= why;
  };
  if (o.kind == op_kind::append) {
    const auto steps = append_steps(o, config_.d_k, config_.d_v);
    if (!steps)
      refuse(refuse_shape);
    else if (rule_ == full::refuse && size() + *steps > config_.capacity)
      refuse(refuse_capacity);
    if (!e.accepted) return e;
    // Row by row: a 2-D append is the same steps one at a time. A window first evicts the oldest
    // row to make room, so a chunk that completes is quantized over the rows the window then holds.
    for (std::size_t i = 0; i < *steps; ++i) {
      if (rule_ == full::evict && size() == config_.capacity) {  // the oldest row after the sinks goes
        const std::size_t oldest = config_.keep;
        rows_.keys.erase(oldest), rows_.values.erase(oldest);
        positions_.erase(positions_.begin() + static_cast<std::ptrdiff_t>(oldest));
      }
      rows_.push(stored_row(o.k, i, profile_.storage), stored_row(o.v, i, profile_.storage));
      positions_.push_back(total_++);
    }
    return e;
  }
  // decode
  if (o.q.shape.size() != 1 || o.q.shape[0] != config_.d_k) refuse(refuse_shape);
  if (size() == 0) refuse(refuse_empty);
  if (!e.accepted) return e;
  std::vector<double> q;
  for (double x : o.q.data) q.push_back(round_to(profile_.storage, x));
  add_decode(e, rows_, 0, std::move(q), profile_);
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
