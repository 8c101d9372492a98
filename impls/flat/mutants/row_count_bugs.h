// Mutants flat-extra-zero-row and flat-last-row-dropped (docs/mutants.md): decode over one row too many or few.
#pragma once

#include <vector>

#include "impls/flat/flat.h"

namespace kvconform::mutants {

struct flat_extra_zero_row : flat {
  using basic_flat::basic_flat;
};
struct flat_last_row_dropped : flat {
  using basic_flat::basic_flat;
};

/// Attends over size() + extra rows (rows past size() read zeros) and reports size() weights.
inline decode_result decode_rows(array_view q, const flat& c, int extra) {
  return decode_with(q, c, [&](std::size_t n, std::size_t dk, std::size_t dv, const double* qd, auto key, auto value) {
    const std::vector<double> zeros(std::max(dk, dv), 0.0);
    const std::size_t rows = extra < 0 ? n - 1 : n + static_cast<std::size_t>(extra);
    decode_result r = attend(
        rows, dk, dv, qd, [&](std::size_t i) { return i < n ? key(i) : zeros.data(); },
        [&](std::size_t i) { return i < n ? value(i) : zeros.data(); });
    r.weights.conservativeResize(static_cast<Eigen::Index>(n));
    if (rows < n) r.weights[static_cast<Eigen::Index>(n - 1)] = 0;
    return r;
  });
}
inline decode_result decode_step(array_view q, const flat_extra_zero_row& c) { return decode_rows(q, c, 1); }
inline decode_result decode_step(array_view q, const flat_last_row_dropped& c) { return decode_rows(q, c, -1); }

}  // namespace kvconform::mutants
