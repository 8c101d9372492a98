// The flat and ring specification, written independently of the caches it judges.
#include "oracle/rows_model.h"

#include <string>

namespace kvconform {

namespace {
/// rank 1 = one step of width shape[0]; rank 2 = shape[0] steps of width shape[1].
bool steps_and_width(const tensor& t, std::size_t& steps, std::size_t& width) {
  if (t.shape.size() == 1) return steps = 1, width = t.shape[0], true;
  if (t.shape.size() == 2) return steps = t.shape[0], width = t.shape[1], true;
  return false;
}
}  // namespace

std::string describe_refusals(unsigned r) {
  std::string s;
  const char* names[] = {"capacity", "shape", "empty", "index"};
  for (unsigned i = 0; i < 4; ++i)
    if (r & (1u << i)) s += (s.empty() ? "" : " or ") + std::string(names[i]);
  return s.empty() ? "none" : s;
}

expectation rows_model::apply(const op& o) {
  expectation e;
  auto refuse = [&](unsigned why) {
    e.accepted = false;
    e.reasons |= why;
  };
  if (o.kind == op_kind::append) {
    std::size_t ks = 0, kw = 0, vs = 0, vw = 0;
    if (!steps_and_width(o.k, ks, kw) || !steps_and_width(o.v, vs, vw) || kw != config_.d_k ||
        vw != config_.d_v || ks != vs)
      refuse(refuse_shape);
    else if (config_.kind == cache_kind::flat && size() + ks > config_.capacity)
      refuse(refuse_capacity);
    if (!e.accepted) return e;
    for (std::size_t i = 0; i < ks; ++i) {
      row k(o.k.data.begin() + static_cast<std::ptrdiff_t>(i * kw), o.k.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * kw));
      row v(o.v.data.begin() + static_cast<std::ptrdiff_t>(i * vw), o.v.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * vw));
      for (double& x : k) x = round_to(profile_.storage, x);
      for (double& x : v) x = round_to(profile_.storage, x);
      keys_.push_back(std::move(k));
      values_.push_back(std::move(v));
    }
    total_ += static_cast<std::int64_t>(ks);
    while (size() > config_.capacity) keys_.pop_front(), values_.pop_front();  // ring eviction
    return e;
  }
  // decode
  if (o.q.shape.size() != 1 || o.q.shape[0] != config_.d_k) refuse(refuse_shape);
  if (size() == 0) refuse(refuse_empty);
  if (!e.accepted) return e;
  attention_problem p;
  p.n = size(), p.d_k = config_.d_k, p.d_v = config_.d_v;
  for (const row& k : keys_) p.keys.insert(p.keys.end(), k.begin(), k.end());
  for (const row& v : values_) p.values.insert(p.values.end(), v.begin(), v.end());
  for (double x : o.q.data) p.q.push_back(round_to(profile_.storage, x));
  e.problems.push_back(std::move(p));
  return e;
}

snapshot rows_model::observe() const {
  snapshot s;
  stream st;
  st.d_k = config_.d_k, st.d_v = config_.d_v;
  for (const row& k : keys_) st.keys.insert(st.keys.end(), k.begin(), k.end());
  for (const row& v : values_) st.values.insert(st.values.end(), v.begin(), v.end());
  s.counters.emplace_back("size", static_cast<std::int64_t>(size()));
  if (config_.kind == cache_kind::ring) {
    for (std::int64_t p = total_ - static_cast<std::int64_t>(size()); p < total_; ++p) st.positions.push_back(p);
    s.counters.emplace_back("total", total_);
  }
  s.streams.push_back(std::move(st));
  return s;
}

}  // namespace kvconform
