// Mutant growing-doubles (docs/mutants.md): storage doubles when full instead of growing by the declared step.
#pragma once

#include <algorithm>

#include "impls/growing/growing.h"

namespace kvconform::mutants {

struct doubles_rules : growing_rules {
  static std::size_t reserve(std::size_t needed, std::size_t reserved, std::size_t step) {
    return std::max(needed, std::max(2 * reserved, step));
  }
};
using growing_doubles = basic_growing<doubles_rules>;

}  // namespace kvconform::mutants
