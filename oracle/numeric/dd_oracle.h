// The fast oracle: the attention formula in double-double, within 1e-26 of an MPFR referee (docs/numerics.md §1.5).
#pragma once

#include <vector>

#include "oracle/numeric/attention_problem.h"
#include "oracle/numeric/double_double.h"

namespace kvconform {

/// Oracle quantities in double-double: scores s (masked keys keep 0), their max m over live keys,
/// weights w and output o. `any_live` is false when every key is masked; o and w are then zero.
struct dd_oracle_result {
  std::vector<dd::ddouble> s, w, o;
  dd::ddouble m;
  bool any_live = false;
};

/// Which kernels run the O(n d) loops. Both give bit-identical results: `fma` uses AVX2 and
/// hardware FMA (only where the CPU has them), `generic` the same operations one lane at a time
/// with std::fma, which is exact on every CPU.
enum class dd_kernels { automatic, generic, fma };

/// Whether this CPU has AVX2 and FMA, so that `automatic` takes the `fma` kernels.
bool dd_fma_kernels_available();

/// s_i = k_i . q / sqrt(d_k) from exact products (TwoProduct) summed without error (TwoSum) in
/// four double-double lanes; e^(s_i - m), the normaliser and w_i in double-double; o = w V with
/// each w_i v_ic formed to 106 bits and summed in double-double. Scores and weights stay accurate
/// to about 1e-30 of their size; below double's normal range they lose digits in absolute terms
/// of at most a few denorm_min (the reason check_decode keeps float128 for profiles without FTZ).
dd_oracle_result attention_oracle_dd(const attention_problem& p, dd_kernels kernels = dd_kernels::automatic);

/// sum_j a_j b_j by the oracle's score kernel: exact products summed in four double-double lanes, then combined.
dd::ddouble dot_dd(const double* a, const double* b, std::size_t d, dd_kernels kernels = dd_kernels::automatic);

}  // namespace kvconform
