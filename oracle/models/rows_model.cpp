// The flat, ring and growing specification, written independently of the caches it judges.
#include "oracle/models/rows_model.h"

#include <algorithm>
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
    for (std::size_t i = 0; i < *steps; ++i) push(o.k, o.v, i);
    return e;
  }
  // decode
  if (o.q.shape.size() != 1 || o.q.shape[0] != config_.d_k) refuse(refuse_shape);
  if (size() == 0) refuse(refuse_empty);
  if (!e.accepted) return e;
  attention_problem p;
  p.n = size_, p.d_k = config_.d_k, p.d_v = config_.d_v;
  p.keys = ordered(keys_, config_.d_k), p.values = ordered(values_, config_.d_v);
  for (double x : o.q.data) p.q.push_back(round_to(profile_.storage, x));
  e.problems.push_back(std::move(p));
  return e;
}

void rows_model::push(const tensor& k, const tensor& v, std::size_t step) {
  const std::vector<double> kr = stored_row(k, step, profile_.storage), vr = stored_row(v, step, profile_.storage);
  ++total_;
  if (rule_ != full::evict || size_ < config_.capacity) {  // slots fill in order until a window is full
    keys_.insert(keys_.end(), kr.begin(), kr.end());
    values_.insert(values_.end(), vr.begin(), vr.end());
    ++size_;
    return;
  }
  // A full window: the newest row takes the slot of the oldest row after the sinks.
  const std::size_t slot = config_.keep + first_;
  std::copy(kr.begin(), kr.end(), keys_.begin() + static_cast<std::ptrdiff_t>(slot * config_.d_k));
  std::copy(vr.begin(), vr.end(), values_.begin() + static_cast<std::ptrdiff_t>(slot * config_.d_v));
  first_ = (first_ + 1) % (config_.capacity - config_.keep);  // keep < capacity (the ring spec's check)
}

std::vector<double> rows_model::ordered(const std::vector<double>& slots, std::size_t width) const {
  const auto at = [&](std::size_t slot) { return slots.begin() + static_cast<std::ptrdiff_t>(slot * width); };
  const std::size_t oldest = config_.keep + first_;  // first_ is 0 until a window wraps
  std::vector<double> out;
  out.reserve(slots.size());
  out.insert(out.end(), slots.begin(), at(std::min(config_.keep, size_)));  // the sinks
  if (size_ > config_.keep) {
    out.insert(out.end(), at(oldest), slots.end());       // the ring from its oldest row
    out.insert(out.end(), at(config_.keep), at(oldest));  // then its newest, before the wrap point
  }
  return out;
}

snapshot rows_model::observe() const {
  snapshot s;
  stream st;
  st.d_k = config_.d_k, st.d_v = config_.d_v;
  st.keys = ordered(keys_, config_.d_k);
  st.values = ordered(values_, config_.d_v);
  s.counters.emplace_back("size", static_cast<std::int64_t>(size()));
  if (rule_ == full::evict) {
    // The sinks keep positions 0 .. keep - 1; every other held row is one of the latest steps.
    const auto n = static_cast<std::int64_t>(size_);
    for (std::int64_t i = 0; i < n; ++i)
      st.positions.push_back(i < static_cast<std::int64_t>(config_.keep) ? i : total_ - (n - i));
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
