// Judging one decode: the double-double oracle, float128 where double-double cannot resolve the bound.
#include "properties/executor/decode_check.h"

#include <boost/multiprecision/float128.hpp>
#include <cmath>
#include <optional>
#include <sstream>

#include "oracle/numeric/attention_oracle.h"
#include "oracle/numeric/bound.h"
#include "oracle/numeric/dd_oracle.h"
#include "properties/executor/ieee_rows.h"

namespace kvconform {

namespace {
using T = boost::multiprecision::float128;

std::string num(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

decode_verdict failed(const char* check, std::string message) {
  decode_verdict v;
  v.check = check, v.message = std::move(message);
  return v;
}

/// The mask rules (docs/numerics.md §4.3) that decide before the oracle's numbers: a masked key takes
/// weight exactly 0; a fully masked row gives zeros.
std::optional<decode_verdict> mask_rules(const attention_problem& p, const double* output, const double* weights) {
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

/// One element against a set of results that decides it without the oracle (docs/numerics.md §4.5).
bool in_set(double x, const outcome_set& o) { return std::isfinite(x) ? o.zero && x == 0 : o.accepts_nonfinite(x); }

/// The regimes of docs/numerics.md §4.5 that need no oracle: a poisoned decode (every output NaN; its
/// weights are not judged, since kernels that guard a NaN normaliser return unnormalised numbers there)
/// and one whose every score is -inf (each output and weight NaN or 0).
decode_verdict without_oracle(const attention_problem& p, const double* output, const double* weights,
                              const ieee_decode& d) {
  outcome_set o;
  o.value = false, o.nan = true, o.zero = d.regime == ieee_regime::all_minus_inf;
  const std::string expected = ", expected " + o.describe() + " (" + d.why + ", docs/numerics.md §4.5)";
  for (std::size_t c = 0; c < p.d_v; ++c)
    if (!in_set(output[c], o))
      return failed("decode-finite", "output[" + std::to_string(c) + "] = " + num(output[c]) + expected);
  if (d.regime == ieee_regime::all_minus_inf)
    for (std::size_t i = 0; i < p.n; ++i)
      if (p.is_live(i) && !in_set(weights[i], o))
        return failed("decode-finite", "weight[" + std::to_string(i) + "] = " + num(weights[i]) + expected);
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

/// One decode's numbers against one oracle's result under the derived bound. `p` is the problem judged
/// (the remaining rows of docs/numerics.md §4.5 when `given` holds non-finite ones, else `given` itself).
template <class Oracle>
class judgement {
 public:
  judgement(const attention_problem& p, const attention_problem& given, const ieee_decode& d,
            const numeric_profile& prof, const Oracle& o)
      : p_(p), given_(given), d_(d), o_(o), s_(p.n), w_(p.n), od_(p.d_v) {
    for (std::size_t i = 0; i < p.n; ++i) s_[i] = approx(o.s[i]), w_[i] = approx(o.w[i]);
    for (std::size_t c = 0; c < p.d_v; ++c) od_[c] = approx(o.o[c]);
    v_.bound = compute_bound(p, s_, approx(o.m), w_, od_, rescaling(prof));
  }

  /// Judges the outputs, then the weights.
  decode_verdict run(const double* output, const double* weights) {
    // Outside max a_i <= 1/(64u) scores carry no information at the declared precision.
    if (!v_.bound.in_domain) return v_;
    v_.numeric = true;
    for (std::size_t c = 0; c < p_.d_v; ++c)
      if (!output_holds(c, output[c])) return v_;
    for (std::size_t i = 0; i < p_.n; ++i)
      if (!weight_holds(i, weights[i])) return v_;
    return v_;
  }

 private:
  const attention_problem &p_, &given_;
  const ieee_decode& d_;
  const Oracle& o_;
  std::vector<double> s_, w_, od_;
  decode_verdict v_;

  /// The remaining rows of an online kernel with a declared block may be spread over more blocks than
  /// they fill, one rescale each at most (docs/numerics.md §4.5).
  numeric_profile rescaling(numeric_profile prof) const {
    if (d_.regime == ieee_regime::regular && prof.online_block) prof.online_undeclared = true;
    return prof;
  }
  bool fail(const char* check, std::string msg) {
    v_.check = check, v_.message = std::move(msg);
    // The declared semantics the oracle computed, so that a cache computing others sees which (docs/numerics.md §7).
    if (p_.has_sink)
      v_.message += "; the oracle's learned sink: logit " + num(p_.sink) +
                    " joins the softmax's normaliser with no value (not a bias on key 0's score)";
    if (p_.softcap > 0)
      v_.message += "; the oracle's soft cap: scores become " + num(p_.softcap) + " tanh(s / " + num(p_.softcap) +
                    ") before the softmax";
    return false;
  }
  /// One value against the oracle: finite, and |err| within its bound. Names are built only for a failure.
  template <class Want>
  bool judge_one(const char* check, const char* what, std::size_t at, double got, const Want& want, double bound) {
    auto name = [&] { return std::string(what) + "[" + std::to_string(at) + "]"; };
    if (!std::isfinite(got))
      return fail("decode-finite", name() + " = " + num(got) + ", expected " + num(approx(want)));
    const double err = abs_error(got, want);
    v_.ratio = std::max(v_.ratio, err / bound);
    if (err <= bound) return true;
    return fail(check, name() + " = " + num(got) + ", oracle " + num(approx(want)) + ", |err| " + num(err) +
                           " > bound " + num(bound) + " (err/bound " + num(err / bound) + ")");
  }
  bool output_holds(std::size_t c, double got) {
    if (d_.regime == ieee_regime::finite)
      return judge_one("decode-bound", "output", c, got, o_.o[c], v_.bound.output[c]);
    const outcome_set r = output_outcomes(given_, d_, c, w_, v_.bound.weights);
    if (std::isfinite(got) ? r.value : r.accepts_nonfinite(got))
      return !std::isfinite(got) || judge_one("decode-bound", "output", c, got, o_.o[c], v_.bound.output[c]);
    return fail("decode-finite", "output[" + std::to_string(c) + "] = " + num(got) + ", expected " + r.describe() +
                                     " (stored rows that are not finite, docs/numerics.md §4.5)");
  }
  bool weight_holds(std::size_t i, double got) {
    if (d_.rescale_nan && std::isnan(got)) return true;
    if (p_.is_live(i)) return judge_one("decode-weights", "weight", i, got, o_.w[i], v_.bound.weights[i]);
    if (!given_.is_live(i) || got == 0) return true;  // a masked key: the mask rules judged it
    return fail("decode-weights", "weight[" + std::to_string(i) + "] = " + num(got) +
                                      " on a key scoring -inf, expected exactly 0 (docs/numerics.md §4.5)");
  }
};
}  // namespace

decode_verdict check_decode(const attention_problem& p, const double* output, const double* weights,
                            const numeric_profile& prof, decode_oracle which) {
  if (auto decided = mask_rules(p, output, weights)) return *decided;
  const ieee_decode d = classify(p, prof);
  if (d.regime == ieee_regime::outside) return decode_verdict{};
  if (d.regime == ieee_regime::poisoned || d.regime == ieee_regime::all_minus_inf)
    return without_oracle(p, output, weights, d);
  const attention_problem& judged = d.regime == ieee_regime::regular ? d.remaining : p;
  if (which == decode_oracle::automatic) which = oracle_for(judged, prof);
  if (which == decode_oracle::float128) {
    const auto o = attention_oracle<T>(judged);
    return judgement(judged, p, d, prof, o).run(output, weights);
  }
  const auto o = attention_oracle_dd(judged);
  return judgement(judged, p, d, prof, o).run(output, weights);
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
