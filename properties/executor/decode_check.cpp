// Judging one decode: the double-double oracle, float128 where double-double cannot resolve the bound.
#include "properties/executor/decode_check.h"

#include <boost/multiprecision/float128.hpp>
#include <cmath>
#include <optional>
#include <sstream>

#include "oracle/numeric/attention_oracle.h"
#include "oracle/numeric/bound.h"
#include "oracle/numeric/dd_oracle.h"

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

namespace {
double approx(const dd::ddouble& x) { return x.hi; }
double approx(const T& x) { return static_cast<double>(x); }
/// |got - want| in the oracle's precision, rounded to double only at the end (docs/numerics.md §1.4).
double abs_error(double got, const dd::ddouble& want) {
  const dd::ddouble e = dd::add(dd::two_sum(got, -want.hi), -want.lo);
  return std::fabs(e.hi);
}
double abs_error(double got, const T& want) { return static_cast<double>(abs(T(got) - want)); }

/// Judges the outputs, then the weights, against one oracle's result under the derived bound.
template <class Oracle>
decode_verdict judge(const attention_problem& p, const double* output, const double* weights,
                     const numeric_profile& prof, const Oracle& o) {
  decode_verdict v;
  std::vector<double> s(p.n), w(p.n), od(p.d_v);
  for (std::size_t i = 0; i < p.n; ++i) s[i] = approx(o.s[i]), w[i] = approx(o.w[i]);
  for (std::size_t c = 0; c < p.d_v; ++c) od[c] = approx(o.o[c]);
  v.bound = compute_bound(p, s, approx(o.m), w, od, prof);
  const attention_bound& b = v.bound;
  // Outside max a_i <= 1/(64u) scores carry no information at the declared precision.
  if (!b.in_domain) return v;
  v.numeric = true;
  auto fail = [&](const char* check, std::string msg) {
    v.check = check, v.message = std::move(msg);
    return false;
  };
  // One value against the oracle: finite, and |err| within its bound. Names are built only for a failure.
  auto judge_one = [&](const char* check, const char* what, std::size_t at, double got, const auto& want,
                       double bound) {
    auto name = [&] { return std::string(what) + "[" + std::to_string(at) + "]"; };
    if (!std::isfinite(got))
      return fail("decode-finite", name() + " = " + num(got) + ", expected " + num(approx(want)));
    const double err = abs_error(got, want);
    v.ratio = std::max(v.ratio, err / bound);
    if (err <= bound) return true;
    return fail(check, name() + " = " + num(got) + ", oracle " + num(approx(want)) + ", |err| " + num(err) +
                           " > bound " + num(bound) + " (err/bound " + num(err / bound) + ")");
  };
  std::vector<char> column_finite(p.d_v, 1);  // row by row, in storage order
  for (std::size_t i = 0; i < p.n; ++i)
    if (p.is_live(i))
      for (std::size_t c = 0; c < p.d_v; ++c) column_finite[c] &= std::isfinite(p.values[i * p.d_v + c]);
  for (std::size_t c = 0; c < p.d_v; ++c) {
    if (!column_finite[c]) {  // edge rule (docs/numerics.md §4.3): NaN/Inf in a value column makes it non-finite
      if (std::isfinite(output[c]))
        return fail("decode-finite", "output[" + std::to_string(c) + "] = " + num(output[c]) +
                                         ", expected non-finite (non-finite value column)"),
               v;
    } else if (!judge_one("decode-bound", "output", c, output[c], o.o[c], b.output[c])) {
      return v;
    }
  }
  for (std::size_t i = 0; i < p.n; ++i)
    if (p.is_live(i) && !judge_one("decode-weights", "weight", i, weights[i], o.w[i], b.weights[i])) return v;
  return v;
}
}  // namespace

decode_verdict check_decode(const attention_problem& p, const double* output, const double* weights,
                            const numeric_profile& prof, decode_oracle which) {
  if (auto decided = edge_rules(p, output, weights)) return *decided;
  if (which == decode_oracle::automatic) which = oracle_for(p, prof);
  if (which == decode_oracle::float128) return judge(p, output, weights, prof, attention_oracle<T>(p));
  return judge(p, output, weights, prof, attention_oracle_dd(p));
}

decode_oracle oracle_for(const attention_problem& p, const numeric_profile& prof) {
  // Without FTZ the bound's floor is one denorm_min, which double-double cannot resolve; values
  // beyond 2^1000 could overflow its partial sums where binary128 has room (docs/numerics.md §1.5).
  if (!prof.flush_subnormals) return decode_oracle::float128;
  for (std::size_t i = 0; i < p.n; ++i)
    if (p.is_live(i))
      for (std::size_t c = 0; c < p.d_v; ++c)
        if (std::fabs(p.values[i * p.d_v + c]) > 0x1p1000) return decode_oracle::float128;
  return decode_oracle::double_double;
}

}  // namespace kvconform
