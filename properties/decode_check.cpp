// The only translation unit of the executor that instantiates the float128 oracle.
#include "properties/decode_check.h"

#include <boost/multiprecision/float128.hpp>
#include <cmath>
#include <sstream>

#include "oracle/attention_oracle.h"
#include "oracle/bound.h"

namespace kvconform {

namespace {
using T = boost::multiprecision::float128;

std::string num(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

bool all_finite(const std::vector<double>& v, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i)
    if (!std::isfinite(v[i])) return false;
  return true;
}
}  // namespace

decode_verdict check_decode(const attention_problem& p, const double* output, const double* weights,
                            const numeric_profile& prof) {
  decode_verdict v;
  auto fail = [&](const char* check, std::string msg) {
    v.check = check, v.message = std::move(msg);
    return v;
  };
  bool live_inputs_finite = all_finite(p.q, 0, p.q.size());
  for (std::size_t i = 0; i < p.n; ++i)
    if (p.is_live(i)) live_inputs_finite = live_inputs_finite && all_finite(p.keys, i * p.d_k, (i + 1) * p.d_k);
  if (!live_inputs_finite) {  // DESIGN 4 edge rule: a NaN/Inf score poisons every output
    for (std::size_t c = 0; c < p.d_v; ++c)
      if (!std::isnan(output[c])) return fail("decode-finite", "output[" + std::to_string(c) + "] = " + num(output[c]) + ", expected NaN (non-finite q or key)");
    return v;
  }

  const auto o = attention_oracle<T>(p);
  for (std::size_t i = 0; i < p.n; ++i)
    if (!p.is_live(i) && weights[i] != 0)
      return fail("decode-masked", "weight[" + std::to_string(i) + "] = " + num(weights[i]) + " on a masked key, expected exactly 0");
  if (!o.any_live) {
    for (std::size_t c = 0; c < p.d_v; ++c)
      if (output[c] != 0) return fail("decode-masked", "output[" + std::to_string(c) + "] = " + num(output[c]) + " for a fully masked row, expected 0");
    return v;
  }

  std::vector<double> s(p.n), w(p.n), od(p.d_v);
  for (std::size_t i = 0; i < p.n; ++i) s[i] = static_cast<double>(o.s[i]), w[i] = static_cast<double>(o.w[i]);
  for (std::size_t c = 0; c < p.d_v; ++c) od[c] = static_cast<double>(o.o[c]);
  const double m = static_cast<double>(o.m);
  const attention_bound b = compute_bound(p, s, m, w, od, prof);
  // Outside max a_i <= 1/(64u) scores carry no information at the declared precision.
  if (!b.in_domain) return v;
  v.numeric = true;

  for (std::size_t c = 0; c < p.d_v; ++c) {
    bool column_finite = true;
    for (std::size_t i = 0; i < p.n; ++i) column_finite = column_finite && (!p.is_live(i) || std::isfinite(p.values[i * p.d_v + c]));
    if (!column_finite) {  // DESIGN 4 edge rule: NaN/Inf in a value column makes it non-finite
      if (std::isfinite(output[c])) return fail("decode-finite", "output[" + std::to_string(c) + "] = " + num(output[c]) + ", expected non-finite (non-finite value column)");
      continue;
    }
    if (!std::isfinite(output[c])) return fail("decode-finite", "output[" + std::to_string(c) + "] = " + num(output[c]) + ", expected " + num(od[c]));
    const double err = static_cast<double>(abs(T(output[c]) - o.o[c]));
    v.ratio = std::max(v.ratio, err / b.output[c]);
    if (err > b.output[c])
      return fail("decode-bound", "output[" + std::to_string(c) + "] = " + num(output[c]) + ", oracle " + num(od[c]) +
                                      ", |err| " + num(err) + " > bound " + num(b.output[c]) + " (err/bound " + num(err / b.output[c]) + ")");
  }
  for (std::size_t i = 0; i < p.n; ++i) {
    if (!p.is_live(i)) continue;
    if (!std::isfinite(weights[i])) return fail("decode-finite", "weight[" + std::to_string(i) + "] = " + num(weights[i]) + ", expected " + num(w[i]));
    const double err = static_cast<double>(abs(T(weights[i]) - o.w[i]));
    v.ratio = std::max(v.ratio, err / b.weights[i]);
    if (err > b.weights[i])
      return fail("decode-weights", "weight[" + std::to_string(i) + "] = " + num(weights[i]) + ", oracle " + num(w[i]) +
                                        ", |err| " + num(err) + " > bound " + num(b.weights[i]) + " (err/bound " + num(err / b.weights[i]) + ")");
  }
  return v;
}

}  // namespace kvconform
