// The IEEE outcomes of a decode over non-finite rows: the derivation and table of docs/numerics.md §4.5.
#include "properties/executor/ieee_rows.h"

#include <cmath>

namespace kvconform {

bool outcome_set::accepts_nonfinite(double x) const {
  if (std::isnan(x)) return nan;
  return x > 0 ? plus_inf : minus_inf;
}

std::string outcome_set::describe() const {
  std::string s;
  auto add = [&](bool on, const char* what) {
    if (on) s += (s.empty() ? "" : " or ") + std::string(what);
  };
  add(value, "a finite value within the bound");
  add(zero, "0");
  add(nan, "NaN");
  add(plus_inf, "+inf");
  add(minus_inf, "-inf");
  return s;
}

namespace {
score_class score_of(const attention_problem& p, std::size_t i) {
  bool plus = false, minus = false;
  for (std::size_t j = 0; j < p.d_k; ++j) {
    const double k = p.keys[i * p.d_k + j], q = p.q[j];
    if (std::isnan(k) || std::isnan(q)) return score_class::nan;
    if (!std::isinf(k) && !std::isinf(q)) continue;
    if (k == 0 || q == 0) return score_class::nan;  // inf · 0
    ((k > 0) == (q > 0) ? plus : minus) = true;
  }
  if (plus && minus) return score_class::nan;  // inf - inf in the sum
  return plus ? score_class::plus_inf : minus ? score_class::minus_inf : score_class::finite;
}

/// Whether a non-finite row's score class holds in the working precision (docs/numerics.md §4.5): its
/// finite products stay inside the input domain of §3.5, so their sum cannot overflow to the other
/// infinity, and no nonzero q entry that meets an infinite key is small enough to be flushed to 0
/// (by the conversion to the working precision or the 1/sqrt(d_k) folded into q).
bool row_in_domain(const attention_problem& p, std::size_t i, const numeric_profile& prof) {
  const double root_d = std::sqrt(static_cast<double>(p.d_k));
  const double tiny = root_d * smallest_normal(prof.working);
  double a = 0;
  for (std::size_t j = 0; j < p.d_k; ++j) {
    const double k = p.keys[i * p.d_k + j], q = p.q[j];
    if (std::isinf(k) && q != 0 && std::fabs(q) < tiny) return false;
    if (std::isfinite(k) && std::isfinite(q)) a += std::fabs(k) * std::fabs(q);
  }
  return a / root_d <= 1 / (64 * unit_roundoff(prof.working));
}

bool has_nan(const double* v, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i)
    if (std::isnan(v[i])) return true;
  return false;
}

/// The problem of the finite scores: -inf rows masked (weight exactly 0), values that are not finite
/// set to 0 (an element they decide is not judged by the oracle; a skipped zero weight adds nothing).
attention_problem remaining_rows(const attention_problem& p, const std::vector<score_class>& scores) {
  attention_problem r = p;
  r.live.assign(p.n, 0);
  for (std::size_t i = 0; i < p.n; ++i) {
    r.live[i] = p.is_live(i) && scores[i] == score_class::finite;
    if (!r.live[i])
      for (std::size_t j = 0; j < p.d_k; ++j) r.keys[i * p.d_k + j] = 0;
  }
  for (std::size_t i = 0; i < r.values.size(); ++i)
    if (!std::isfinite(r.values.vector()[i])) r.values[i] = 0;
  return r;
}

/// How many -inf rows an online or split-K kernel needs to meet before any finite score to compute
/// -inf - (-inf): a declared block's worth, one when it may rescale after every key or split anywhere.
std::size_t rescale_nan_rows(const numeric_profile& prof) {
  if (prof.online_undeclared || prof.splits) return 1;
  return prof.online_block;  // 0: a two-pass kernel never does
}
}  // namespace

ieee_decode classify(const attention_problem& p, const numeric_profile& prof) {
  ieee_decode d;
  d.scores.assign(p.n, score_class::finite);
  bool nonfinite = false, nan_entry = has_nan(p.q.data(), 0, p.q.size()), domain = true, poison = false;
  std::size_t minus = 0, finite_rows = 0;
  for (std::size_t i = 0; i < p.n; ++i) {
    if (!p.is_live(i)) continue;
    for (std::size_t c = 0; c < p.d_v; ++c) nonfinite = nonfinite || !std::isfinite(p.values[i * p.d_v + c]);
    const score_class s = d.scores[i] = score_of(p, i);
    nan_entry = nan_entry || has_nan(p.keys.data(), i * p.d_k, (i + 1) * p.d_k);
    poison = poison || s == score_class::nan || s == score_class::plus_inf;
    minus += s == score_class::minus_inf, finite_rows += s == score_class::finite;
    if (s != score_class::finite) nonfinite = true, domain = domain && row_in_domain(p, i, prof);
  }
  if (!nonfinite) return d;
  if (nan_entry || (domain && poison)) {
    d.regime = ieee_regime::poisoned;
    d.why = "a NaN or +inf score makes the normaliser NaN";
  } else if (!domain) {
    d.regime = ieee_regime::outside;
  } else if (finite_rows == 0) {
    d.regime = ieee_regime::all_minus_inf;
    d.why = "every score is -inf: -inf - (-inf) is NaN, or 0 where a max of -inf is taken as a masked row";
  } else {
    d.regime = ieee_regime::regular;
    d.remaining = remaining_rows(p, d.scores);
    const std::size_t need = rescale_nan_rows(prof);
    d.rescale_nan = need > 0 && minus >= need;
  }
  return d;
}

outcome_set output_outcomes(const attention_problem& p, const ieee_decode& d, std::size_t c,
                            const std::vector<double>& w, const std::vector<double>& w_bound) {
  bool nan = false, plus = false, minus = false, optional = false, opt_plus = false, opt_minus = false;
  for (std::size_t i = 0; i < p.n; ++i) {
    const double v = p.values[i * p.d_v + c];
    if (!p.is_live(i) || std::isfinite(v)) continue;
    // A zero weight times inf or NaN is NaN, or nothing where the kernel skips zero weights; a weight
    // within its bound of 0 may be computed as 0, or as a tiny positive number that keeps the infinity.
    if (d.scores[i] == score_class::minus_inf) {
      optional = true;
    } else if (w[i] <= w_bound[i]) {
      optional = true, opt_plus = opt_plus || v > 0, opt_minus = opt_minus || v < 0;
    } else {
      (std::isnan(v) ? nan : v > 0 ? plus : minus) = true;
    }
  }
  outcome_set o;
  if (nan || (plus && minus)) {
    o.value = false, o.nan = true;
  } else if (plus || minus) {
    o.value = false, o.plus_inf = plus, o.minus_inf = minus, o.nan = optional;
  } else {
    o.nan = optional, o.plus_inf = opt_plus, o.minus_inf = opt_minus;
  }
  o.nan = o.nan || d.rescale_nan;
  return o;
}

}  // namespace kvconform
