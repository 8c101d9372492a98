// Mutant (docs/mutants.md, flat-strict-capacity): `>=` in the capacity check wastes the last slot; exact_fill kills it.
#pragma once

#include "impls/flat/flat.h"

namespace kvconform::mutants {

struct flat_strict_capacity : flat {
  using basic_flat::basic_flat;
  void append(array_view k, array_view v) {
    const steps_of ks(k);
    if (ks.ok && size() + ks.steps >= max_len()) throw capacity_error("append: cache full");
    basic_flat::append(k, v);
  }
};

}  // namespace kvconform::mutants
