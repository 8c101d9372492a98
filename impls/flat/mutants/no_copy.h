// Mutant flat-no-copy (docs/mutants.md): keeps pointers to the caller's arrays instead of copies.
#pragma once

#include <vector>

#include "impls/flat/flat.h"

namespace kvconform::mutants {

struct flat_no_copy : flat {
  using basic_flat::basic_flat;
  void append(array_view k, array_view v) {
    basic_flat::append(k, v);  // validates and counts; the stored copies are then ignored
    for (std::size_t i = 0; i < steps_of(k).steps; ++i) kept_.push_back({k.data + i * d_k(), v.data + i * d_v()});
  }
  row_matrix keys() const { return gather(0, d_k()); }
  row_matrix values() const { return gather(1, d_v()); }

 private:
  row_matrix gather(int which, std::size_t width) const {
    row_matrix m(static_cast<Eigen::Index>(kept_.size()), static_cast<Eigen::Index>(width));
    for (std::size_t r = 0; r < kept_.size(); ++r)
      for (std::size_t c = 0; c < width; ++c)
        m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = (which ? kept_[r].v : kept_[r].k)[c];
    return m;
  }
  struct row_ptrs {
    const double *k, *v;
  };
  std::vector<row_ptrs> kept_;
};

}  // namespace kvconform::mutants
