// What the executor checks and reports for declared storage formats (docs/numerics.md §6), beside its own checks.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oracle/models/model.h"
#include "oracle/numeric/bound.h"
#include "oracle/numeric/numeric_profile.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// A format rule that did not hold: a stable check name ("format") and what was seen.
struct format_problem {
  std::string check, message;
};

/// Judges integer-group storage after every op, lets decodes attend over the rows the cache
/// exposes, and computes the reported end-to-end figure. Element formats need none of this: the
/// model rounds exactly as declared and stored rows compare bit for bit.
class format_checker {
 public:
  format_checker(const numeric_profile& p, const cache_config& c) : p_(p), c_(c) {}

  /// Every integer-group side of every stream: the number of scales (and minima) exposed, each
  /// against the declared rule within one rounding of its format, every quantized value on its
  /// group's grid and within half a step (plus the scale's rounding) of its input, residual rows
  /// exact. Also a cache that exposes scales for a side declared in an element format. On success
  /// those sides of `expected` take the exposed values, so that the bitwise comparison that
  /// follows passes them, and the exposed rows are kept for the next decodes.
  std::optional<format_problem> check_state(snapshot& expected, const snapshot& observed);
  /// After a failed bitwise comparison: for a side declared in an element format, the format and the first
  /// differing value (" (keys are declared bf16: key row 0 value 2 is 1.0078125, where bf16 stores 1.015625)");
  /// a hint when rows declared f64 match another element format's rounding exactly (" (keys are declared f64,
  /// but the stored rows match fp16 rounding: declare that format)") or lie on the grid of a common integer group
  /// layout ("... lie on the grid of int8 g32 token sym scale=fp16: ..."), else "".
  std::string hint(const snapshot& expected, const snapshot& observed) const;
  /// Where integer groups make the attended rows the cache's own, the problems take the rows the
  /// cache exposed at the last state check (a decode changes nothing), so a decode that uses other
  /// scales than its views fails the bound.
  void substitute(expectation& e) const;
  /// The end-to-end ratio of problem i: |result - oracle over the rows as given| over a bound that
  /// propagates each value's storage error through the scores and the softmax, plus the working
  /// bound (docs/numerics.md §6.4); negative when it does not apply (no rounding storage, non-finite data).
  /// `working` is that bound when the decode's judgement computed it (else empty, and it is computed here).
  double end_to_end(const expectation& e, std::size_t i, const double* output, const double* weights,
                    const attention_bound& working) const;

 private:
  /// Per stream, per element: the bound on |exposed - given| of an integer-group side (empty otherwise).
  struct stream_errors {
    std::vector<double> keys, values;
  };
  std::optional<format_problem> check_side(const stream& want, const stream& got, bool keys, stream_errors& err);
  /// Group checks that passed, by the bits of everything they read (a unit of rows, the model's ideal and
  /// the cache's stored scales and minima) with the error bounds they found: the same inputs give the same
  /// verdict, and most rows are the same as at the last op, so each is judged once per session.
  class passed_units {
   public:
    /// Makes the key of rows [a, b) of the two sides' rows and groups [ga, ga + ng) of their views.
    void key(const std::vector<double>& want_rows, const std::vector<double>& got_rows, std::size_t a, std::size_t b,
             const group_view& want, const group_view& got, std::size_t ga, std::size_t ng);
    /// The error bounds of the key's unit if it passed before.
    const std::vector<double>* find() const;
    /// Records that the key's unit passed with these error bounds.
    void add(std::vector<double> err);

   private:
    bool matches(const std::vector<double>& stored) const;
    // The key's parts in place (a unit's rows are most of the state: copied only when the unit is added).
    std::vector<std::span<const double>> parts_;
    std::size_t rows_ = 0, size_ = 0;  // the unit's elements per side, and the key's elements
    std::uint64_t hash_ = 0;
    std::unordered_map<std::uint64_t, std::vector<std::pair<std::vector<double>, std::vector<double>>>> by_hash_;
  };
  std::vector<double> element_errors(const attention_problem& given, bool keys, std::size_t stream) const;

  /// A side's declared format in stream `st` as the last state check saw it (a hybrid sliding layer may differ).
  const storage_format& format(std::size_t st, bool keys) const;

  numeric_profile p_;
  cache_config c_;
  std::vector<bool> sliding_;  // per stream at the last state check: stored in the sliding-group formats
  std::vector<shared_doubles> exposed_keys_, exposed_values_;  // per stream, integer-group sides only
  std::vector<stream_errors> errors_;
  passed_units passed_[2];  // keys, values
};

}  // namespace kvconform
