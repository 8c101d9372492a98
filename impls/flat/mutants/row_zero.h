// Mutant flat-row-zero (docs/mutants.md): each append overwrites from row 0 while the length grows.
#pragma once

#include "impls/flat/flat.h"

namespace kvconform::mutants {

struct flat_row_zero : flat {
  using basic_flat::basic_flat;
  void append(array_view k, array_view v) {
    const std::size_t before = len_;
    if (len_ + steps_of(k).steps > max_len()) throw capacity_error("append: cache full");
    len_ = 0;
    try {
      basic_flat::append(k, v);
    } catch (...) {
      len_ = before;
      throw;
    }
    len_ += before;
  }
};

}  // namespace kvconform::mutants
