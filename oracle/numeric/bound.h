// The derived componentwise error bound for one decode (docs/numerics.md §3).
#pragma once

#include <vector>

#include "oracle/numeric/attention_problem.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// Safety factor F: covers vendor exp errors and unmodelled roundings (docs/numerics.md §3.3).
inline constexpr double bound_safety_factor = 2.0;
/// Constants of the exp error model |err| <= u (c_e + c_t |x|) (docs/numerics.md §3.3).
inline constexpr double bound_c_e = 4.0, bound_c_t = 4.0;
/// A soft cap's evaluation c tanh(s / c) is within c_h u c of the exact cap of the computed score (docs/numerics.md
/// §7.3).
inline constexpr double bound_c_h = 8.0;

/// Per-component bounds on |o^_c - o_c| and per-key bounds on |w^_i - w_i|.
struct attention_bound {
  std::vector<double> output;
  std::vector<double> weights;
  double max_a = 0;  ///< max_i a_i, for the input-domain rule max a_i <= 1/(64u)
  bool in_domain = true;
};

/// The bound, computed in double from the oracle's s, m and w (rounded to double; the bound
/// needs no more) and the oracle output o for the u_out term. Masked keys get bound 0: their
/// weight must be exactly zero.
attention_bound compute_bound(const attention_problem& p, const std::vector<double>& s, double m,
                              const std::vector<double>& w, const std::vector<double>& o, const numeric_profile& prof,
                              double F = bound_safety_factor);

/// gamma_k = k u / (1 - k u); infinite once k u >= 1.
double gamma_k(double k, double u);

}  // namespace kvconform
