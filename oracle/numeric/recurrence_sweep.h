// The O(d_k d_v) part of a recurrence token in double-double: generic, and AVX2 + FMA with the same bits.
#pragma once

#include <cstddef>

#include "oracle/numeric/dd_oracle.h"
#include "oracle/numeric/double_double.h"

namespace kvconform::recurrence_terms {

/// One token over the state S (d_k x d_v, row-major): for the delta rule the projection proj = k^T S first, then
/// the update and, in the same pass over S, the read-out o_c = sum_j q_j S_jc and, for the delta rule, the 2-norm of
/// every column of the new state's high parts (its bound's). The decay form has no projection and no norms.
struct sweep {
  dd::ddouble* S;
  std::size_t d_k, d_v;
  dd::ddouble alpha;
  const dd::ddouble *q, *k, *v;
  double beta;  ///< the delta rule's; a negative one selects the decay form
  dd::ddouble *proj, *o;
  double* norms;  ///< d_v (the delta rule only)
};

void run_sweep(const sweep& a, dd_kernels kernels);

}  // namespace kvconform::recurrence_terms
