// The reference growing KV cache: no capacity, storage reserved in whole steps of a declared size.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <limits>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include "impls/common/append_steps.h"
#include "impls/common/attention.h"

namespace kvconform {

/// How a growing cache reserves storage: the rows to hold `needed` rows, in whole steps of `step`
/// (mlx-lm's KVCache grows by 256 rows at a time; a step of 1 is a cache that concatenates).
/// Mutants replace this rule (impls/growing/mutants/).
struct growing_rules {
  static std::size_t reserve(std::size_t needed, std::size_t /*reserved*/, std::size_t step) {
    return (needed + step - 1) / step * step;
  }
};

/// Holds every step appended, in order, as copies; appends are never refused for room. Storage
/// grows by whole steps of `step` rows (reserved()). Shape errors throw and change nothing.
template <class Rules = growing_rules>
class basic_growing {
 public:
  using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using view = Eigen::Map<const row_matrix>;

  basic_growing(std::size_t step, std::size_t d_k, std::size_t d_v)
      : step_(step), k_(0, static_cast<Eigen::Index>(d_k)), v_(0, static_cast<Eigen::Index>(d_v)) {
    if (step == 0 || d_k == 0 || d_v == 0) throw shape_error("growing: step, d_k and d_v must be positive");
  }

  /// Appends one step (1-D) or n steps (2-D); n = 0 is a no-op.
  void append(array_view k, array_view v) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v());
    if (len_ + steps > reserved()) grow(Rules::reserve(len_ + steps, reserved(), step_));
    for (std::size_t i = 0; i < steps; ++i) {
      const auto row = static_cast<Eigen::Index>(len_ + i);
      k_.row(row) = Eigen::Map<const Eigen::RowVectorXd>(k.data + i * d_k(), k_.cols());
      v_.row(row) = Eigen::Map<const Eigen::RowVectorXd>(v.data + i * d_v(), v_.cols());
    }
    len_ += steps;
  }

  /// Appends the m steps of k and v, then attends with query row i of q (2-D (m, d_k)) over the rows before it
  /// and the chunk's first i + 1: output (m, d_v), weights (m, size before + m). Shape errors change nothing.
  decode_result prefill(array_view k, array_view v, array_view q) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v()), before = len_;
    check_prefill_queries(q, steps, d_k());
    append(k, v);
    return attend_causal(
        steps, len_, d_k(), d_v(), q.data, [&](std::size_t i) { return k_.data() + i * d_k(); },
        [&](std::size_t i) { return v_.data() + i * d_v(); },
        [&](std::size_t query, std::size_t row) { return row <= before + query; });
  }

  /// Drops the newest n steps and the whole steps of storage no longer needed; index_error (and no change)
  /// when fewer are held.
  void rollback(std::size_t n) {
    if (n > len_) throw index_error("rollback: fewer steps held");
    len_ -= n;
    grow(len_ == 0 ? 0 : Rules::reserve(len_, reserved(), step_));
  }

  std::size_t size() const { return len_; }
  /// Rows of storage reserved: whole steps, none before the first append.
  std::size_t reserved() const { return static_cast<std::size_t>(k_.rows()); }
  std::size_t d_k() const { return static_cast<std::size_t>(k_.cols()); }
  std::size_t d_v() const { return static_cast<std::size_t>(v_.cols()); }
  view keys() const { return {k_.data(), static_cast<Eigen::Index>(len_), k_.cols()}; }
  view values() const { return {v_.data(), static_cast<Eigen::Index>(len_), v_.cols()}; }

 private:
  /// Reserves `rows` rows, keeping the held ones; the new rows hold NaN so a read of them shows.
  void grow(std::size_t rows) {
    const auto old = k_.rows(), n = static_cast<Eigen::Index>(rows);
    k_.conservativeResize(n, Eigen::NoChange), v_.conservativeResize(n, Eigen::NoChange);
    if (n > old) {
      k_.bottomRows(n - old).setConstant(std::numeric_limits<double>::quiet_NaN());
      v_.bottomRows(n - old).setConstant(std::numeric_limits<double>::quiet_NaN());
    }
  }
  std::size_t step_, len_ = 0;
  row_matrix k_, v_;
};

using growing = basic_growing<>;

/// One decode step over every held row. Throws empty_error on an empty cache and shape_error
/// unless q is 1-D of width d_k.
template <class Rules>
decode_result decode_step(array_view q, const basic_growing<Rules>& c) {
  if (q.rank != 1 || q.dims[0] != c.d_k()) throw shape_error("decode_step: q must be 1-D of width d_k");
  if (c.size() == 0) throw empty_error("decode_step: empty cache");
  const auto k = c.keys();
  const auto v = c.values();
  return attend(
      c.size(), c.d_k(), c.d_v(), q.data, [&](std::size_t i) { return k.data() + i * c.d_k(); },
      [&](std::size_t i) { return v.data() + i * c.d_v(); });
}

}  // namespace kvconform
