// Exact rounding of doubles to the element formats a cache may declare (docs/numerics.md §6.1).
#pragma once

#include "oracle/numeric/storage_format.h"

namespace kvconform {

/// What the rounding needs of an element format: significand bits (the leading one included),
/// the exponent of the smallest normal, the largest finite value and whether it has infinity.
struct element_limits {
  int precision;
  int emin;
  double max;
  bool has_infinity;
};
element_limits limits_of(element_format e);

/// x rounded to nearest, ties to even, to f's element format, as if with an unbounded exponent
/// first: a result beyond the largest finite value follows f.overflow, a subnormal result is
/// kept or flushed to zero of its sign as f.subnormals says, infinities follow f.overflow, and a
/// NaN keeps its sign and the top payload bits that fit, quieted (as x86 conversions do; e4m3
/// has one NaN per sign). f64 without flushing is the identity.
double round_element(const storage_format& f, double x);

/// What an element-format cache with per-tensor scale s exposes for x: the exact quotient x / s
/// rounded once to the format (not x / s rounded to double first), times s rounded to double.
/// Without `f.scaled` (or with s = 1) this is round_element(f, x).
double store_element(const storage_format& f, double x, double scale);

/// An upper bound on |store_element(f, x, s) - x| for finite x whose result is finite: half the
/// spacing of the format at x / s (the subnormal spacing below the smallest normal, the smallest
/// normal itself when subnormals flush), times s, plus the double rounding of the product, or
/// |x| - max s where a saturating format clamps.
double element_error_bound(const storage_format& f, double x, double scale);

}  // namespace kvconform
