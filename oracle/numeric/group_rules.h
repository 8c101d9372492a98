// The rules integer groups follow (docs/numerics.md §6.2): ideal scale and zero, their tolerance, the grid, the error.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "oracle/numeric/storage_format.h"

namespace kvconform {

/// A group's ideal scale and zero (before rounding to the scale's format) from the least and
/// greatest input of the group: symmetric scale = max(|lo|, |hi|) / qmax and zero 0;
/// asymmetric scale = (hi - lo) / qmax and zero = lo (the minimum, as llama.cpp's q4_1 and KIVI store it).
struct group_ideal {
  double scale = 0, zero = 0;
};
group_ideal ideal_group(const storage_format& f, double lo, double hi);

/// How far a stored scale or minimum may be from its ideal value: one ulp of the scale's format
/// at the ideal value (one rounding, whatever its direction) plus one float rounding, for a cache
/// that forms amax / qmax in float before rounding it to fp16.
double stored_tolerance(element_format scale_format, double ideal);

/// The code an exposed value stands for when it lies on the group's grid (scale times an integer
/// in range, plus the minimum when asymmetric, each up to one float rounding of the dequantization);
/// nullopt when it lies off the grid or out of range.
std::optional<long> grid_code(const storage_format& f, double scale, double zero, double exposed);

/// The bound on |exposed - x| for an input x of a group whose ideal is `ideal` and whose cache
/// stores `scale` and `zero`: half a step, plus qmax times the scale's own rounding and the
/// minimum's rounding (a value at the top of the range may be clamped), plus a few float
/// roundings of x / scale for caches that quantize in float.
double group_error_bound(const storage_format& f, const group_ideal& ideal, double scale, double zero, double x);

/// The common integer group layout (int8 or int4, groups of 32 along d, symmetric or with a minimum, fp16 scales)
/// whose grid rows `stored` lie on as the quantization of `given` (both rows x `width`, row-major) under the
/// rules above, each group's scale and minimum read off its stored values; nullopt when none fits. It lets a
/// failure tell a cache that stores integer groups undeclared which layout to declare.
std::optional<storage_format> common_group_layout(const std::vector<double>& given, const std::vector<double>& stored,
                                                  std::size_t width);

}  // namespace kvconform
