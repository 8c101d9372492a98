// The row helpers every model shares: append shapes, storage rounding.
#include "oracle/models/model.h"

#include <algorithm>

namespace kvconform {

std::optional<std::size_t> append_steps(const op& o, std::size_t d_k, std::size_t d_v) {
  auto steps = [](const tensor& t, std::size_t width) -> std::optional<std::size_t> {
    if (t.shape.size() == 1 && t.shape[0] == width) return 1;
    if (t.shape.size() == 2 && t.shape[1] == width) return t.shape[0];
    return std::nullopt;
  };
  const auto ks = steps(o.k, d_k), vs = steps(o.v, d_v);
  return ks && ks == vs ? ks : std::nullopt;
}

std::vector<double> stored_row(const tensor& t, std::size_t i, precision storage) {
  const std::size_t w = t.shape.back();
  std::vector<double> r(t.data.begin() + static_cast<std::ptrdiff_t>(i * w),
                        t.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * w));
  for (double& x : r) x = round_to(storage, x);
  return r;
}

void add_decode(expectation& e, const stored_stream& s, std::size_t index, std::vector<double> q,
                const numeric_profile& p, std::vector<unsigned char> live) {
  auto problem = [&](bool given) {
    attention_problem a;
    a.n = s.size(), a.d_k = q.size(), a.d_v = s.size() ? s.values.stored(0).size() : 0;
    for (std::size_t i = 0; i < a.n; ++i) {
      const auto& k = given ? s.keys.given(i) : s.keys.stored(i);
      const auto& v = given ? s.values.given(i) : s.values.stored(i);
      a.keys.append(k.begin(), k.end());
      a.values.append(v.begin(), v.end());
    }
    a.q = q, a.live = live;
    return a;
  };
  e.problems.push_back(problem(false));
  e.streams.push_back(index);
  if (p.rounds_storage()) e.originals.push_back(problem(true));
}

void add_prefill(expectation& e, const stored_stream& s, std::size_t index, const tensor& q, std::size_t before,
                 const numeric_profile& p) {
  add_queries(e, s, index, q.data.data(), q.shape[0], q.shape[1], p,
              [before](std::size_t i, std::size_t j) { return j <= before + i; });
}

void add_queries(expectation& e, const stored_stream& s, std::size_t index, const double* q, std::size_t m,
                 std::size_t d_k, const numeric_profile& p, const std::function<bool(std::size_t, std::size_t)>& sees) {
  const std::size_t n = s.size();
  auto rows = [&](bool given, bool keys) {
    std::vector<double> out;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& r =
          keys ? (given ? s.keys.given(i) : s.keys.stored(i)) : (given ? s.values.given(i) : s.values.stored(i));
      out.insert(out.end(), r.begin(), r.end());
    }
    return shared_doubles(std::move(out));  // one block, shared by the m problems
  };
  const shared_doubles k = rows(false, true), v = rows(false, false);
  const shared_doubles gk = p.rounds_storage() ? rows(true, true) : k, gv = p.rounds_storage() ? rows(true, false) : v;
  for (std::size_t i = 0; i < m; ++i) {
    attention_problem a;
    a.n = n, a.d_k = d_k, a.d_v = s.values.stored(0).size(), a.keys = k, a.values = v;
    for (std::size_t j = 0; j < d_k; ++j) a.q.push_back(round_to(p.storage, q[i * d_k + j]));
    for (std::size_t j = 0; j < n; ++j) a.live.push_back(sees(i, j) ? 1 : 0);
    if (std::all_of(a.live.begin(), a.live.end(), [](unsigned char x) { return x != 0; }))
      a.live.clear();  // every row attends, as a plain decode
    if (p.rounds_storage()) {
      attention_problem g = a;
      g.keys = gk, g.values = gv;
      e.originals.push_back(std::move(g));
    }
    e.problems.push_back(std::move(a));
    e.streams.push_back(index);
  }
}

bool sinks_fit(const numeric_profile& p, const tensor& sinks, std::size_t heads) {
  return p.attention.sinks != sink_kind::learned || sinks.shape == std::vector<std::size_t>{heads};
}

void stamp_attention(expectation& e, const numeric_profile& p, const tensor& sinks, std::size_t per) {
  const bool learned = p.attention.sinks == sink_kind::learned && !sinks.data.empty();
  for (auto* problems : {&e.problems, &e.originals})
    for (std::size_t i = 0; i < problems->size(); ++i) {
      attention_problem& a = (*problems)[i];
      a.softcap = p.attention.softcap;
      a.has_sink = learned;
      if (learned)
        a.sink = round_to(p.storage, sinks.data[std::min(i / std::max<std::size_t>(per, 1), sinks.data.size() - 1)]);
    }
}

}  // namespace kvconform
