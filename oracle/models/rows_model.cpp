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
    for (std::size_t i = 0; i < *steps; ++i) {
      keys_.push_back(stored_row(o.k, i, profile_.storage));
      values_.push_back(stored_row(o.v, i, profile_.storage));
    }
    total_ += static_cast<std::int64_t>(*steps);
    while (size() > config_.capacity) keys_.pop_front(), values_.pop_front();  // ring eviction
    return e;
  }
  // decode
  if (o.q.shape.size() != 1 || o.q.shape[0] != config_.d_k) refuse(refuse_shape);
  if (size() == 0) refuse(refuse_empty);
  if (!e.accepted) return e;
  e.problems.push_back(decode_problem(keys_, values_, o.q, config_.d_v, profile_.storage));
  return e;
}

snapshot rows_model::observe() const {
  snapshot s;
  stream st;
  st.d_k = config_.d_k, st.d_v = config_.d_v;
  for (const row& k : keys_) st.keys.add(k.data(), k.size());  // views: the executor compares in place
  for (const row& v : values_) st.values.add(v.data(), v.size());
  s.counters.emplace_back("size", static_cast<std::int64_t>(size()));
  if (rule_ == full::evict) {
    for (std::int64_t p = total_ - static_cast<std::int64_t>(size()); p < total_; ++p) st.positions.push_back(p);
    s.counters.emplace_back("total", total_);
  }
  s.streams.push_back(std::move(st));
  return s;
}

}  // namespace kvconform
