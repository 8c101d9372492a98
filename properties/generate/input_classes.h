// The input classes (docs/numerics.md §4.1): key, value and query generators that force each regime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "oracle/numeric/storage_format.h"

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

/// Rows and queries of one class around an anchor a (entries +-1, so |a|^2 = d_k): with
/// q = a, a key (tau / sqrt(d_k)) a + noise scores tau plus the noise's projection.
class row_source {
 public:
  row_source(input_class c, std::size_t d_k, std::size_t d_v, std::uint64_t anchor_seed);

  /// Appends n rows for absolute positions first, first + 1, ... drawn from `seed`. Not thread-safe: it
  /// keeps its draws (a source belongs to one trace's generation).
  void rows(std::int64_t first, std::size_t n, std::uint64_t seed, std::vector<double>& keys,
            std::vector<double>& values) const;
  /// The storage formats (and per-tensor scales) `format_edges` draws its values for.
  void set_formats(const storage_format& keys, const storage_format& values, double k_scale, double v_scale) {
    formats_[0] = keys, formats_[1] = values, scales_[0] = k_scale, scales_[1] = v_scale;
    drawn_.clear();
  }
  /// The query of this class (the same for every decode of a trace).
  const std::vector<double>& query() const { return q_; }
  input_class kind() const { return class_; }
  std::size_t d_k() const { return d_k_; }
  std::size_t d_v() const { return d_v_; }

 private:
  input_class class_;
  std::size_t d_k_, d_v_;
  std::vector<double> anchor_, q_;
  double sign_;
  storage_format formats_[2] = {};
  double scales_[2] = {1, 1};
  template <class Rng>
  double edge_value(Rng& rng, int side) const;
  void draw(std::int64_t first, std::size_t n, std::uint64_t seed, std::vector<double>& keys,
            std::vector<double>& values) const;
  /// Every draw so far, by its arguments: a generated op that is made from the model state when it runs asks
  /// for the same rows when it is generated and when it runs (its precondition, its run, the model's update).
  struct drawn {
    std::vector<double> keys, values;
  };
  mutable std::map<std::tuple<std::int64_t, std::size_t, std::uint64_t>, drawn> drawn_;
};

}  // namespace kvconform
