// Mutant paged-e4m3-nan-overflow (docs/mutants.md): e4m3 overflows to NaN where saturation is declared.
#pragma once

#include "impls/paged/paged.h"

namespace kvconform::mutants {

struct nan_overflow_rules : storage_rules {
  static double store_scaled(storage_format f, double x, double s) {
    f.overflow = overflow_rule::nan;  // the conversion's default, not the declared saturation
    return storage_rules::store_scaled(f, x, s);
  }
};
using paged_e4m3_nan_overflow = paged_stored<formats::e4m3_scaled, formats::e4m3_scaled, nan_overflow_rules>;

}  // namespace kvconform::mutants
