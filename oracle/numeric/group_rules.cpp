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

namespace {
/// Whether stored values [a, b) lie on the grid of format f as the quantization of the given ones: the scale
/// (and minimum) the stored values imply, rounded to the scale's format, within one rounding of the ideal, every
/// value on its grid and within the error bound.
bool group_fits(const storage_format& f, const double* given, const double* stored, std::size_t n) {
  double lo = given[0], hi = given[0], s_lo = stored[0], s_hi = stored[0], s_amax = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(given[i]) || !std::isfinite(stored[i])) return false;
    lo = std::min(lo, given[i]), hi = std::max(hi, given[i]);
    s_lo = std::min(s_lo, stored[i]), s_hi = std::max(s_hi, stored[i]), s_amax = std::max(s_amax, std::fabs(stored[i]));
  }
  // The largest magnitude (symmetric) or both ends (with a minimum) of a group take the extreme codes.
  const storage_format sf{.element = f.scale_format};
  const double scale = round_element(sf, f.symmetric ? s_amax / f.qmax() : (s_hi - s_lo) / f.qmax());
  const double zero = f.symmetric ? 0.0 : round_element(sf, s_lo);
  const group_ideal ideal = ideal_group(f, lo, hi);
  if (std::fabs(scale - ideal.scale) > stored_tolerance(f.scale_format, ideal.scale) ||
      std::fabs(zero - ideal.zero) > stored_tolerance(f.scale_format, ideal.zero))
    return false;
  for (std::size_t i = 0; i < n; ++i)
    if (!grid_code(f, scale, zero, stored[i]) ||
        std::fabs(stored[i] - given[i]) > group_error_bound(f, ideal, scale, zero, given[i]))
      return false;
  return true;
}
}  // namespace

std::optional<storage_format> common_group_layout(const std::vector<double>& given, const std::vector<double>& stored,
                                                  std::size_t width) {
  if (width == 0 || given.empty() || given.size() != stored.size() || given.size() % width) return std::nullopt;
  // llama.cpp's two first: a grid that fits one of them by chance fits another only by a second chance.
  for (const storage_format f : {formats::q8_0, formats::q4_1, storage_format{.groups = true, .symmetric = false},
                                 storage_format{.groups = true, .bits = 4}}) {
    bool all = true;
    for (std::size_t a = 0; all && a < given.size(); a += width)
      for (std::size_t g = 0; all && g < width; g += f.group) {
        const std::size_t n = std::min(f.group, width - g);
        all = group_fits(f, &given[a + g], &stored[a + g], n);
      }
    if (all) return f;
  }
  return std::nullopt;
}

}  // namespace kvconform
