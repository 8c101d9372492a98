// Mutant flat-whole-buffer-views (docs/mutants.md): keys()/values() show all max_len rows.
#pragma once

#include "impls/flat/flat.h"

namespace kvconform::mutants {

struct flat_whole_buffer_views : flat {
  using basic_flat::basic_flat;
  view keys() const { return {k_.data(), k_.rows(), k_.cols()}; }
  view values() const { return {v_.data(), v_.rows(), v_.cols()}; }
};

}  // namespace kvconform::mutants
