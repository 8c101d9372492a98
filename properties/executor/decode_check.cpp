// The only translation unit of the executor that instantiates the float128 oracle.
#include "properties/executor/decode_check.h"

#include <boost/multiprecision/float128.hpp>
#include <cmath>
#include <optional>
#include <sstream>

#include "oracle/numeric/attention_oracle.h"
#include "oracle/numeric/bound.h"

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

namespace {
decode_verdict failed(const char* check, std::string message) {
  decode_verdict v;
  v.check = check, v.message = std::move(message);
  return v;
}

/// The edge rules (docs/numerics.md §4.3) that decide before the oracle's numbers: a NaN/Inf score
/// poisons every output; a masked key takes weight exactly 0; a fully masked row gives zeros.
std::optional<decode_verdict> edge_rules(const attention_problem& p, const double* output, const double* weights) {
  bool live_inputs_finite = all_finite(p.q, 0, p.q.size());
  for (std::size_t i = 0; i < p.n; ++i)
    if (p.is_live(i)) live_inputs_finite = live_inputs_finite && all_finite(p.keys, i * p.d_k, (i + 1) * p.d_k);
  if (!live_inputs_finite) {
    for (std::size_t c = 0; c < p.d_v; ++c)
      if (!std::isnan(output[c]))
        return failed("decode-finite",
                      "output[" + std::to_string(c) + "] = " + num(output[c]) + ", expected NaN (non-finite q or key)");
    return decode_verdict{};
  }
  bool any_live = false;
  for (std::size_t i = 0; i < p.n; ++i) {
    any_live = any_live || p.is_live(i);
    if (!p.is_live(i) && weights[i] != 0)
      return failed("decode-masked",
                    "weight[" + std::to_string(i) + "] = " + num(weights[i]) + " on a masked key, expected exactly 0");
  }
  if (any_live) return std::nullopt;
  for (std::size_t c = 0; c < p.d_v; ++c)
    if (output[c] != 0)
      return failed("decode-masked",
                    "output[" + std::to_string(c) + "] = " + num(output[c]) + " for a fully masked row, expected 0");
  return decode_verdict{};
}
}  // namespace

decode_verdict check_decode(const attention_problem& p, const double* output, const double* weights,
                            const numeric_profile& prof) {
  if (auto decided = edge_rules(p, output, weights)) return *decided;
  decode_verdict v;
  auto fail = [&](const char* check, std::string msg) {
    v.check = check, v.message = std::move(msg);
    return v;
  };
  const auto o = attention_oracle<T>(p);
  std::vector<double> s(p.n), w(p.n), od(p.d_v);
  for (std::size_t i = 0; i < p.n; ++i) s[i] = static_cast<double>(o.s[i]), w[i] = static_cast<double>(o.w[i]);
  for (std::size_t c = 0; c < p.d_v; ++c) od[c] = static_cast<double>(o.o[c]);
  const double m = static_cast<double>(o.m);
  const attention_bound b = compute_bound(p, s, m, w, od, prof);
  // Outside max a_i <= 1/(64u) scores carry no information at the declared precision.
  if (!b.in_domain) return v;
  v.numeric = true;

  // One value against the oracle: finite, and |err| (taken in T) within its bound.
  auto judge = [&](const char* check, const std::string& name, double got, const T& want, double bound) {
    if (!std::isfinite(got))
      return fail("decode-finite", name + " = " + num(got) + ", expected " + num(static_cast<double>(want))), false;
    const double err = static_cast<double>(abs(T(got) - want));
    v.ratio = std::max(v.ratio, err / bound);
    if (err <= bound) return true;
    fail(check, name + " = " + num(got) + ", oracle " + num(static_cast<double>(want)) + ", |err| " + num(err) +
                    " > bound " + num(bound) + " (err/bound " + num(err / bound) + ")");
    return false;
  };
  for (std::size_t c = 0; c < p.d_v; ++c) {
    const std::string name = "output[" + std::to_string(c) + "]";
    bool column_finite = true;
    for (std::size_t i = 0; i < p.n; ++i)
      column_finite = column_finite && (!p.is_live(i) || std::isfinite(p.values[i * p.d_v + c]));
    if (!column_finite) {  // edge rule (docs/numerics.md §4.3): NaN/Inf in a value column makes it non-finite
      if (std::isfinite(output[c]))
        return fail("decode-finite", name + " = " + num(output[c]) + ", expected non-finite (non-finite value column)");
    } else if (!judge("decode-bound", name, output[c], o.o[c], b.output[c])) {
      return v;
    }
  }
  for (std::size_t i = 0; i < p.n; ++i)
    if (p.is_live(i) && !judge("decode-weights", "weight[" + std::to_string(i) + "]", weights[i], o.w[i], b.weights[i]))
      return v;
  return v;
}

}  // namespace kvconform
