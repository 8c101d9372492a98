// The input classes (docs/numerics.md §4.1): the regimes of scores and values a trace draws from, by name.
#pragma once

#include <span>

namespace kvconform {

/// Each class fixes how scores, values and the query are drawn. Softmax is shift-invariant,
/// so several bugs only show when the inputs force overflow, underflow or cancellation.
enum class input_class {
  moderate,             ///< s ~ N(0,1): scale, precision, expf, normalisation
  peaked,               ///< s ~ N(0, 8^2)
  minus_1000,           ///< all scores ~ -1000: an extra zero row dominates; naive softmax 0/0
  plus_1000,            ///< all scores ~ +1000: naive softmax overflows
  near_tie_1000,        ///< ties at +1000 with gaps 1e-6..1: wrong max, conditioning
  huge_1e4,             ///< scores ~ +-1e4
  spread_1500,          ///< s ~ U(-1500, 1500)
  max_last,             ///< scores rise by 750 per position: the newest row is the max by > 710
  max_first,            ///< scores fall by 750 per position: the oldest held row is the max
  ramp,                 ///< increasing ramp: online softmax without rescaling
  all_equal,            ///< q = 0: weights exactly 1/n; off-by-one rows
  cancellation,         ///< a_i >> |s_i|: float score accumulation; validates the a_i term
  ill_conditioned_key,  ///< one key in four has a_i ~ 1e4 |s_i| and v ~ 1e-12
  value_offset,         ///< v = 1000 + N(0,1): exactness of the weighted sum
  one_hot,              ///< a few keys at 0, the rest at -800: exact one-hot weights
  zero_keys,            ///< half the keys are exactly zero: a length derived from content loses them
  /// Storage formats only (docs/numerics.md §6.5): values on the declared formats' edges: ties,
  /// the largest finite value and beyond, subnormals, signed zeros, groups with a negative outlier
  /// and ranges beyond fp16.
  format_edges,
};

const char* to_string(input_class c);
std::span<const input_class> all_input_classes();
/// Classes whose scores reach |s| >= 710 (exp overflows without the max subtracted).
std::span<const input_class> large_score_classes();

}  // namespace kvconform
