// Mutant flat-partial-write (docs/mutants.md): rows go in before k and v are checked to agree in steps.
#pragma once

#include "impls/flat/flat.h"

namespace kvconform::mutants {

struct flat_partial_write : flat {
  using basic_flat::basic_flat;
  void append(array_view k, array_view v) {
    const steps_of ks(k), vs(v);
    if (!ks.ok || !vs.ok || ks.width != d_k() || vs.width != d_v()) throw shape_error("append: bad shape");
    if (len_ + ks.steps > max_len()) throw capacity_error("append: cache full");
    for (std::size_t i = 0; i < ks.steps; ++i, ++len_) {
      if (i >= vs.steps) throw shape_error("append: k and v differ in steps");  // after i rows went in
      write_row(len_, k.data + i * d_k(), v.data + i * d_v());
    }
    if (vs.steps != ks.steps) throw shape_error("append: k and v differ in steps");
  }
};

}  // namespace kvconform::mutants
