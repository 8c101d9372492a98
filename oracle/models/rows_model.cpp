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
    for (std::size_t i = 0; i < *steps; ++i) {
      keys_.push_back(stored_row(o.k, i, profile_.storage));
      values_.push_back(stored_row(o.v, i, profile_.storage));
      positions_.push_back(total_++);
      if (rule_ == full::evict && size() > config_.capacity) {  // the oldest row after the sinks goes
        const auto oldest = static_cast<std::ptrdiff_t>(config_.keep);
        keys_.erase(keys_.begin() + oldest), values_.erase(values_.begin() + oldest);
        positions_.erase(positions_.begin() + oldest);
      }
    }
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
  for (const row& k : keys_) st.keys.insert(st.keys.end(), k.begin(), k.end());
  for (const row& v : values_) st.values.insert(st.values.end(), v.begin(), v.end());
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
