// The flat and ring specification, written independently of the caches it judges.
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
    total_ += static_cast<std::int64_t>(*steps);
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
  if (size_ < config_.capacity) {  // slots fill in order until the first eviction
    keys_.insert(keys_.end(), kr.begin(), kr.end());
    values_.insert(values_.end(), vr.begin(), vr.end());
    ++size_;
    return;
  }
  // Full (only a ring gets here: a flat cache refuses): the newest row takes the oldest row's slot.
  std::copy(kr.begin(), kr.end(), keys_.begin() + static_cast<std::ptrdiff_t>(first_ * config_.d_k));
  std::copy(vr.begin(), vr.end(), values_.begin() + static_cast<std::ptrdiff_t>(first_ * config_.d_v));
  first_ = (first_ + 1) % config_.capacity;
}

std::vector<double> rows_model::ordered(const std::vector<double>& slots, std::size_t width) const {
  const auto split = slots.begin() + static_cast<std::ptrdiff_t>(first_ * width);
  std::vector<double> out;
  out.reserve(slots.size());
  out.insert(out.end(), split, slots.end());
  out.insert(out.end(), slots.begin(), split);
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
    for (std::int64_t p = total_ - static_cast<std::int64_t>(size()); p < total_; ++p) st.positions.push_back(p);
    s.counters.emplace_back("total", total_);
  }
  s.streams.push_back(std::move(st));
  return s;
}

}  // namespace kvconform
