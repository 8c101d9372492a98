// Mutant (docs/mutants.md, flat-counter-before-check): the length is bumped before the capacity check and a refused
// append keeps it; refused_append_unchanged kills it.
#pragma once

#include "impls/flat/flat.h"

namespace kvconform::mutants {

struct flat_counter_before_check : flat {
  using basic_flat::basic_flat;
  void append(array_view k, array_view v) {
    const steps_of ks(k);
    len_ += ks.steps;
    if (len_ > max_len()) throw capacity_error("append: cache full");  // len_ stays bumped
    len_ -= ks.steps;
    basic_flat::append(k, v);
  }
};

}  // namespace kvconform::mutants
