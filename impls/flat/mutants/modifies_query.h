// Mutant flat-modifies-query (docs/mutants.md): decode pre-scales the caller's q in place.
#pragma once

#include <cmath>

#include "impls/flat/flat.h"

namespace kvconform::mutants {

struct prescaled_q_kernel : attention_kernel {
  static double scale(std::size_t) { return 1.0; }  // q already carries 1/sqrt(d_k)
};
struct prescaled_q_rules : flat_rules {
  using kernel = prescaled_q_kernel;
};
struct flat_modifies_query : basic_flat<prescaled_q_rules> {
  using basic_flat::basic_flat;
};

inline decode_result decode_step(array_view q, const flat_modifies_query& c) {
  double* mine = const_cast<double*>(q.data);  // the bug: writes through the caller's array
  for (std::size_t j = 0; j < q.size() && q.rank == 1 && q.dims[0] == c.d_k(); ++j)
    mine[j] /= std::sqrt(static_cast<double>(c.d_k()));
  return decode_step(q, static_cast<const basic_flat<prescaled_q_rules>&>(c));
}

}  // namespace kvconform::mutants
