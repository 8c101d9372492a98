// Mutant hybrid-window-frees-early (docs/mutants.md): the sliding group frees a block while the window's first row
// is still its last (an off-by-one of one row).
#pragma once

#include "impls/hybrid/hybrid.h"

namespace kvconform::mutants {

struct frees_early_rules : hybrid_rules {
  static bool in_window(std::size_t j, std::size_t bs, std::size_t n, std::size_t window, std::size_t keep) {
    return j * bs < keep || (j + 1) * bs + (window - keep) > n + 1;
  }
};
using hybrid_frees_early = basic_hybrid<frees_early_rules>;

}  // namespace kvconform::mutants
