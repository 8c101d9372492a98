// Double-double arithmetic: error-free transformations and the few operations the fast oracle needs.
#pragma once

#include <cmath>
#include <limits>

namespace kvconform::dd {

/// An unevaluated sum hi + lo with |lo| <= ulp(hi) / 2: about 106 significant bits in double's
/// exponent range (docs/numerics.md §1.5). Plain data so that arrays of it stay cheap.
struct ddouble {
  double hi = 0, lo = 0;
};

/// s + e = a + b exactly, for any a and b (Knuth's TwoSum). Only additions: FP contraction cannot
/// touch it.
inline ddouble two_sum(double a, double b) {
  const double s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

/// s + e = a + b exactly when |a| >= |b| or a = 0 (Dekker's FastTwoSum).
inline ddouble fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

/// p + e = a * b exactly unless the product underflows or overflows: the rounding error of a
/// product is itself a double, and one fused multiply-add yields it (TwoProduct).
inline ddouble two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

/// a + b with relative error at most 3u^2 of the result (the accurate double-double sum: two
/// TwoSums, so cancellation between a and b loses nothing).
inline ddouble add(ddouble a, ddouble b) {
  ddouble s = two_sum(a.hi, b.hi);
  const ddouble t = two_sum(a.lo, b.lo);
  s = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(s.hi, s.lo + t.lo);
}
inline ddouble add(ddouble a, double b) {
  const ddouble s = two_sum(a.hi, b);
  return fast_two_sum(s.hi, s.lo + a.lo);
}
inline ddouble neg(ddouble a) { return {-a.hi, -a.lo}; }
inline ddouble sub(ddouble a, ddouble b) { return add(a, neg(b)); }

/// a * b with relative error about 4u^2: the exact product of the high parts plus the cross terms.
inline ddouble mul(ddouble a, ddouble b) {
  const ddouble p = two_prod(a.hi, b.hi);
  return fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}
inline ddouble mul(ddouble a, double b) {
  const ddouble p = two_prod(a.hi, b);
  return fast_two_sum(p.hi, p.lo + a.lo * b);
}
/// a * 2^k exactly (barring underflow): both parts scale.
inline ddouble ldexp(ddouble a, int k) { return {std::ldexp(a.hi, k), std::ldexp(a.lo, k)}; }
/// a * p for a power of two p: exact, and cheaper than ldexp (barring underflow and overflow).
inline ddouble scale(ddouble a, double p) { return {a.hi * p, a.lo * p}; }

/// a / b by long division with three quotient digits (relative error about 4u^2).
inline ddouble div(ddouble a, ddouble b) {
  const double q1 = a.hi / b.hi;
  ddouble r = sub(a, mul(b, q1));
  const double q2 = r.hi / b.hi;
  r = sub(r, mul(b, q2));
  const double q3 = r.hi / b.hi;
  return add(fast_two_sum(q1, q2), q3);
}

/// sqrt(x) for x >= 0: the double root plus one Newton correction, whose residual x - r^2 the
/// fused multiply-add forms exactly.
inline ddouble sqrt(double x) {
  if (x <= 0) return {std::sqrt(x), 0};
  const double r = std::sqrt(x);
  return fast_two_sum(r, std::fma(-r, r, x) / (2 * r));
}

/// a < b, comparing the exact values.
inline bool less(ddouble a, ddouble b) { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo); }

/// ln 2 to about 2^-107 (checked against MPFR in oracle/numeric/tests/double_double_test.cpp).
inline constexpr ddouble ln2 = {6.931471805599452862e-01, 2.319046813846299558e-17};

/// 1 / k! for k = 0 .. 11 in double-double, from the exact factorials.
const ddouble* inverse_factorials();

/// e^x with relative error about (1 + |x|) 1e-32: x = n ln 2 / 256 + r, a table of 2^(j/256), a
/// Taylor series of e^r to 2^-106, then 2^k. Below -745.2 the result is 0 (under denorm_min / 2),
/// above 709.8 +inf; NaN stays NaN.
ddouble exp(ddouble x);

/// tanh x to about 1e-31 relative: -expm1(-2|x|) / (2 + expm1(-2|x|)) with expm1 by halving below |x| = 1/4, where
/// 1 - e^(-2|x|) would cancel, and from exp above; the sign restored.
ddouble tanh(ddouble x);

}  // namespace kvconform::dd
