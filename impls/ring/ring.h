// The reference sliding-window (ring) KV cache: a fixed buffer of W rows, evicting the oldest.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "impls/common/array_view.h"
#include "impls/common/attention.h"
#include "impls/common/errors.h"

namespace kvconform {

/// Where a ring puts and finds rows. Step p lives in slot p mod W; the oldest held step is
/// T - len. Mutants replace one of these two rules (impls/mutants/ring_*.h).
struct ring_rules {
  /// Slot of the oldest held row.
  static std::size_t oldest_slot(std::int64_t total, std::size_t len, std::size_t window) {
    return static_cast<std::size_t>((total - static_cast<std::int64_t>(len)) % static_cast<std::int64_t>(window));
  }
  /// The rows [first, last) of an n-row append that are written: n >= W keeps the last W.
  static std::pair<std::size_t, std::size_t> kept(std::size_t n, std::size_t window) {
    return {n > window ? n - window : 0, n};
  }
};

/// Holds the last min(T, W) of the T steps ever appended, oldest first, in a buffer of W rows
/// used as a ring (no row is ever shifted). Appends are never refused for capacity; shape
/// errors throw and change nothing.
template <class Rules = ring_rules>
class basic_ring {
 public:
  using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  basic_ring(std::size_t window, std::size_t d_k, std::size_t d_v)
      : k_(static_cast<Eigen::Index>(window), static_cast<Eigen::Index>(d_k)),
        v_(static_cast<Eigen::Index>(window), static_cast<Eigen::Index>(d_v)) {
    if (window == 0 || d_k == 0 || d_v == 0) throw shape_error("ring: window, d_k and d_v must be positive");
  }

  /// Appends one step (1-D) or n steps (2-D), crossing the wrap point as needed.
  void append(array_view k, array_view v) {
    const steps_of ks(k), vs(v);
    if (!ks.ok || !vs.ok) throw shape_error("append: k and v must be 1-D or 2-D");
    if (ks.width != d_k() || vs.width != d_v()) throw shape_error("append: wrong width");
    if (ks.steps != vs.steps) throw shape_error("append: k and v differ in steps");
    const auto [first, last] = Rules::kept(ks.steps, window());
    for (std::size_t i = first; i < last; ++i) {
      const auto slot =
          static_cast<Eigen::Index>(static_cast<std::size_t>(total_ + static_cast<std::int64_t>(i)) % window());
      k_.row(slot) = Eigen::Map<const Eigen::RowVectorXd>(k.data + i * d_k(), static_cast<Eigen::Index>(d_k()));
      v_.row(slot) = Eigen::Map<const Eigen::RowVectorXd>(v.data + i * d_v(), static_cast<Eigen::Index>(d_v()));
    }
    total_ += static_cast<std::int64_t>(ks.steps);
  }

  std::size_t size() const {
    return total_ < static_cast<std::int64_t>(window()) ? static_cast<std::size_t>(total_) : window();
  }
  std::size_t window() const { return static_cast<std::size_t>(k_.rows()); }
  std::size_t d_k() const { return static_cast<std::size_t>(k_.cols()); }
  std::size_t d_v() const { return static_cast<std::size_t>(v_.cols()); }
  /// Steps appended since creation, T.
  std::int64_t total() const { return total_; }
  /// Absolute 0-based index of each held step, oldest first: T - len .. T - 1.
  std::vector<std::int64_t> positions() const {
    std::vector<std::int64_t> p;
    for (std::size_t i = size(); i > 0; --i) p.push_back(total_ - static_cast<std::int64_t>(i));
    return p;
  }

  /// The i-th held row in logical (oldest-first) order, read in place.
  const double* key_row(std::size_t i) const { return k_.data() + slot(i) * d_k(); }
  const double* value_row(std::size_t i) const { return v_.data() + slot(i) * d_v(); }

  /// Contiguous copies of the held rows in logical order, (size, d_k) and (size, d_v): the
  /// oldest row need not sit in slot 0, so a view would come in two pieces. Decode does not
  /// copy; it reads the ring in place.
  row_matrix keys() const { return logical(k_); }
  row_matrix values() const { return logical(v_); }

 private:
  std::size_t slot(std::size_t i) const { return (Rules::oldest_slot(total_, size(), window()) + i) % window(); }
  /// The held rows in logical order: slots oldest .. W - 1, then 0 .. (the rest), two block copies.
  row_matrix logical(const row_matrix& m) const {
    const auto n = static_cast<Eigen::Index>(size()), first = static_cast<Eigen::Index>(slot(0));
    const Eigen::Index head = std::min(n, static_cast<Eigen::Index>(window()) - first);
    row_matrix out(n, m.cols());
    out.topRows(head) = m.middleRows(first, head);
    out.bottomRows(n - head) = m.topRows(n - head);
    return out;
  }
  row_matrix k_, v_;
  std::int64_t total_ = 0;
};

using ring = basic_ring<>;

/// One decode step over the held rows. Throws empty_error on an empty cache and shape_error
/// unless q is 1-D of width d_k.
template <class Rules>
decode_result decode_step(array_view q, const basic_ring<Rules>& c) {
  if (q.rank != 1 || q.dims[0] != c.d_k()) throw shape_error("decode_step: q must be 1-D of width d_k");
  if (c.size() == 0) throw empty_error("decode_step: empty cache");
  return attend(
      c.size(), c.d_k(), c.d_v(), q.data, [&](std::size_t i) { return c.key_row(i); },
      [&](std::size_t i) { return c.value_row(i); });
}

}  // namespace kvconform
