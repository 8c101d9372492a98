// Mutant flat-length-from-content (docs/mutants.md): size() counts only rows whose key is not all zero.
#pragma once

#include "impls/flat/flat.h"

namespace kvconform::mutants {

struct flat_length_from_content : flat {
  using basic_flat::basic_flat;
  std::size_t size() const {
    std::size_t n = 0;
    for (std::size_t r = 0; r < len_; ++r) n += !k_.row(static_cast<Eigen::Index>(r)).isZero(0);
    return n;
  }
  view keys() const { return {k_.data(), static_cast<Eigen::Index>(size()), k_.cols()}; }
  view values() const { return {v_.data(), static_cast<Eigen::Index>(size()), v_.cols()}; }
};

}  // namespace kvconform::mutants
