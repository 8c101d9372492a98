// Mutant flat-counter-before-check (docs/mutants.md): the length is bumped before the capacity check.
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
