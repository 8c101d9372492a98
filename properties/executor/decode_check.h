// Judging one decode against the oracle under the derived bound.
#pragma once

#include <string>

#include "oracle/numeric/attention_problem.h"
#include "oracle/numeric/bound.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// The verdict on one problem. `check` is empty on success, else a stable name
/// (decode-finite, decode-bound, decode-weights, decode-masked).
struct decode_verdict {
  std::string check, message;
  double ratio = 0;      ///< worst err / bound (F = 2, docs/numerics.md §3.1); > 1 fails
  bool numeric = false;  ///< false when the inputs are outside the numeric domain
  /// The bound it judged by (empty when an edge rule decided first), which the end-to-end figure reuses.
  attention_bound bound;
};

/// Which oracle judges a decode (docs/numerics.md §1.5). `automatic` takes double-double, and
/// float128 where double-double cannot resolve the bound: a profile without FTZ, or values beyond 2^1000.
enum class decode_oracle { automatic, double_double, float128 };

/// `output` has p.d_v entries and `weights` p.n. The error is taken in the oracle's precision.
decode_verdict check_decode(const attention_problem& p, const double* output, const double* weights,
                            const numeric_profile& prof, decode_oracle which = decode_oracle::automatic);

/// The oracle `automatic` picks for this problem and profile.
decode_oracle oracle_for(const attention_problem& p, const numeric_profile& prof);

}  // namespace kvconform
