// Round-to-nearest-even from double into narrow formats, written from the formats' definitions alone.
#include "oracle/numeric/element_rounding.h"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

namespace kvconform {

element_limits limits_of(element_format e) {
  switch (e) {
    case element_format::f64: return {53, -1022, DBL_MAX, true};
    case element_format::f32: return {24, -126, FLT_MAX, true};
    case element_format::f16: return {11, -14, 65504.0, true};
    case element_format::bf16: return {8, -126, 0x1.fep127, true};
    case element_format::e4m3: return {4, -6, 448.0, false};
    case element_format::e5m2: return {3, -14, 57344.0, true};
  }
  return {53, -1022, DBL_MAX, true};
}

namespace {
constexpr std::uint64_t sign_bit = 0x8000000000000000ull, quiet_bit = 0x0008000000000000ull;

/// A NaN as the format stores it: sign kept, payload cut to the format's mantissa, quiet.
double round_nan(element_format e, double x) {
  const int keep = limits_of(e).precision - 1;  // mantissa bits the format has
  std::uint64_t bits = std::bit_cast<std::uint64_t>(x) | quiet_bit;
  if (e == element_format::e4m3) return std::bit_cast<double>((bits & sign_bit) | 0x7ff8000000000000ull);
  const std::uint64_t cut = (std::uint64_t{1} << (52 - keep)) - 1;
  return std::bit_cast<double>(bits & ~cut);
}

/// What a value beyond the largest finite one becomes.
double overflowed(const storage_format& f, const element_limits& l, double x) {
  switch (f.overflow) {
    case overflow_rule::saturate: return std::copysign(l.max, x);
    case overflow_rule::nan: return std::copysign(std::numeric_limits<double>::quiet_NaN(), x);
    case overflow_rule::infinity: break;
  }
  return std::copysign(std::numeric_limits<double>::infinity(), x);
}
}  // namespace

double round_element(const storage_format& f, double x) {
  // Every double is an f64 with subnormals: the common case of the models' residual rows, after every op.
  if (f.element == element_format::f64 && f.subnormals) return x;
  const element_limits l = limits_of(f.element);
  if (std::isnan(x)) return f.element == element_format::f64 ? x : round_nan(f.element, x);
  if (std::isinf(x)) return f.element == element_format::f64 ? x : overflowed(f, l, x);
  if (x == 0) return x;
  const double a = std::fabs(x);
  double r = a;
  if (f.element != element_format::f64) {
    // The quantum of a's binade (or of the subnormal range), then an exact scaled round-to-even.
    const int e = std::max(std::ilogb(a), l.emin);
    const double quantum = std::ldexp(1.0, e - l.precision + 1);
    r = std::nearbyint(a / quantum) * quantum;  // default rounding mode: to nearest, ties to even
    if (r > l.max) return overflowed(f, l, x);
  }
  if (!f.subnormals && r < std::ldexp(1.0, l.emin)) r = 0;
  return std::copysign(r, x);
}

double store_element(const storage_format& f, double x, double scale) {
  if (!f.scaled || scale == 1) return round_element(f, x);
  double y = x / scale;
  if (std::isfinite(y) && y != 0) {
    // x / scale rounded to double may sit exactly on a midpoint of the narrow format although the
    // exact quotient does not; the exact remainder of the division tells on which side it lies.
    const element_limits l = limits_of(f.element);
    const int e = std::max(std::ilogb(y), l.emin);
    const double quanta = std::ldexp(std::fabs(y), l.precision - 1 - e);
    if (quanta - std::floor(quanta) == 0.5)
      if (const double rem = std::fma(-y, scale, x); rem != 0) y = std::nextafter(y, rem > 0 ? INFINITY : -INFINITY);
  }
  return round_element(f, y) * scale;
}

double element_error_bound(const storage_format& f, double x, double scale) {
  const double s = f.scaled ? scale : 1.0;
  const element_limits l = limits_of(f.element);
  const double y = std::fabs(x / s), smallest_normal = std::ldexp(1.0, l.emin);
  if (f.overflow == overflow_rule::saturate && y > l.max) return std::fabs(x) - l.max * s + 0x1p-52 * std::fabs(x);
  if (f.element == element_format::f64) return f.subnormals || y >= smallest_normal ? 0 : y;
  const int e = std::max(std::ilogb(y == 0 ? smallest_normal : y), l.emin);
  double half = std::ldexp(1.0, e - l.precision);
  if (!f.subnormals && y < smallest_normal) half = smallest_normal;
  return half * s + 0x1p-53 * (std::fabs(x) + half * s);
}

}  // namespace kvconform
