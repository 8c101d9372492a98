// The flat and ring specification, written independently of the caches it judges.
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
      if (size() == config_.capacity) rows_.keys.pop_front(), rows_.values.pop_front();  // ring eviction
      rows_.push(stored_row(o.k, i, profile_.storage), stored_row(o.v, i, profile_.storage));
    }
    total_ += static_cast<std::int64_t>(*steps);
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
    for (std::int64_t p = total_ - static_cast<std::int64_t>(size()); p < total_; ++p) st.positions.push_back(p);
    s.counters.emplace_back("total", total_);
  }
  s.streams.push_back(std::move(st));
  return s;
}

}  // namespace kvconform
