// What IEEE arithmetic lets a decode return over rows that hold ±inf or NaN (docs/numerics.md §4.5).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "oracle/numeric/attention_problem.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// What k_i · q is in IEEE arithmetic, in any order of its sum: a NaN entry, inf · 0 or infinite
/// products of both signs give NaN; infinite products of one sign give that infinity.
enum class score_class : unsigned char { finite, minus_inf, plus_inf, nan };

/// The results one output element (or weight) may take (the table of docs/numerics.md §4.5).
struct outcome_set {
  bool value = true;  ///< a finite number, judged by the oracle and bound over the remaining rows
  bool zero = false;  ///< exactly 0
  bool nan = false, plus_inf = false, minus_inf = false;

  /// Whether a non-finite x is one of them.
  bool accepts_nonfinite(double x) const;
  /// "NaN or +inf", "NaN, 0", "a finite value or NaN".
  std::string describe() const;
};

/// Where a decode falls in the table of docs/numerics.md §4.5.
enum class ieee_regime {
  finite,         ///< every live row, q and value finite: judged as in §3 alone
  poisoned,       ///< a NaN or +inf score: every output NaN
  all_minus_inf,  ///< every live score -inf: each output and weight NaN or 0
  regular,        ///< some finite score, no NaN or +inf score: -inf scores take weight 0
  outside,        ///< the finite parts of the non-finite rows leave the input domain (§3.5): not judged
};

struct ieee_decode {
  ieee_regime regime = ieee_regime::finite;
  std::vector<score_class> scores;  ///< per row; masked rows stay `finite` (never read)
  /// regular: the problem the oracle and bound judge: rows scoring -inf masked, non-finite values 0.
  attention_problem remaining;
  /// regular: an online or split-K kernel may meet only -inf scores first and compute -inf - (-inf),
  /// so NaN is also accepted for every output and weight.
  bool rescale_nan = false;
  std::string why;  ///< the regime in words, for a failure message
};

ieee_decode classify(const attention_problem& p, const numeric_profile& prof);

/// regular: the results output element c may take, from the remaining problem's oracle weights `w`
/// and their bounds (a weight within its bound of 0 may be computed as 0).
outcome_set output_outcomes(const attention_problem& p, const ieee_decode& d, std::size_t c,
                            const std::vector<double>& w, const std::vector<double>& w_bound);

}  // namespace kvconform
