// Mutant paged-leak-on-refusal (docs/mutants.md): a refused append keeps the blocks it took.
#pragma once

#include "impls/paged/paged.h"

namespace kvconform::mutants {

struct leak_on_refusal_rules : paged_rules {
  static std::vector<std::size_t> take(std::vector<std::size_t>& free, std::size_t need) {
    std::vector<std::size_t> taken;
    for (; need > 0; --need) {
      if (free.empty()) throw capacity_error("append: block pool exhausted");  // what was taken is lost
      taken.push_back(free.back());
      free.pop_back();
    }
    return taken;
  }
};
using paged_leak_on_refusal = basic_paged<leak_on_refusal_rules>;

}  // namespace kvconform::mutants
