// The integer group rules of docs/numerics.md §6.2, as the model and the format check use them.
#include "oracle/numeric/group_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "oracle/numeric/element_rounding.h"

namespace kvconform {

namespace {
/// Float's unit roundoff: the slack for a cache that quantizes and dequantizes in float.
constexpr double u_float = 0x1p-24;
}  // namespace

group_ideal ideal_group(const storage_format& f, double lo, double hi) {
  const double q = f.qmax();
  if (f.symmetric) return {std::max(std::fabs(lo), std::fabs(hi)) / q, 0.0};
  return {(hi - lo) / q, lo};
}

double stored_tolerance(element_format scale_format, double ideal) {
  const element_limits l = limits_of(scale_format);
  const double a = std::fabs(ideal);
  const int e = std::max(a == 0 ? l.emin : std::ilogb(a), l.emin);
  return std::ldexp(1.0, e - l.precision + 1) + u_float * a;
}

std::optional<long> grid_code(const storage_format& f, double scale, double zero, double exposed) {
  if (!std::isfinite(scale) || !std::isfinite(exposed)) return std::nullopt;
  const double shifted = exposed - (f.symmetric ? 0.0 : zero);
  const long lo = f.symmetric ? -static_cast<long>(f.qmax()) : 0, hi = static_cast<long>(f.qmax());
  if (scale == 0) return shifted == 0 || exposed == zero ? std::optional<long>(0) : std::nullopt;
  const double code = std::nearbyint(shifted / scale);
  if (code < lo || code > hi) return std::nullopt;
  const double on_grid = code * scale + (f.symmetric ? 0.0 : zero);
  const double slack = 2 * u_float * (std::fabs(code * scale) + (f.symmetric ? 0.0 : std::fabs(zero)));
  if (std::fabs(exposed - on_grid) > slack) return std::nullopt;
  return static_cast<long>(code);
}

double group_error_bound(const storage_format& f, const group_ideal& ideal, double scale, double zero, double x) {
  const double step = std::fabs(scale), q = f.qmax();
  // The ideal scale is itself a double quotient: for a subnormal range its rounding is absolute, up to
  // half of denorm_min (counted whole: half is not a double), which qmax codes multiply (found by fuzzing).
  double b = step / 2 + q * (std::fabs(scale - ideal.scale) + std::numeric_limits<double>::denorm_min());
  if (!f.symmetric) b += std::fabs(zero - ideal.zero);
  return b + 4 * u_float * (std::fabs(x) + q * step + std::fabs(zero));
}

}  // namespace kvconform
