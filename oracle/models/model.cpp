// The row helpers every model shares: append shapes, storage rounding.
#include "oracle/models/model.h"

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

}  // namespace kvconform
