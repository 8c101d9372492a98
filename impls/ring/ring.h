// The reference sliding-window (ring) KV cache: a fixed buffer of W rows, evicting the oldest.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "impls/common/array_view.h"
#include "impls/common/attention.h"
#include "impls/common/errors.h"
#include "impls/common/row_storage.h"

namespace kvconform {

/// Where a ring puts and finds rows. Step p lives in slot p mod W; the oldest held step is
/// T - len. Mutants replace one of these two rules (impls/mutants/ring_*.h).
struct ring_rules {
  using storage = storage_policy<>;  ///< the formats keys and values are stored in (docs/numerics.md §6)
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
  using storage = typename Rules::storage;
  using side = side_storage<typename storage::rules>;
  static constexpr bool formats = storage::keys.rounds() || storage::values.rounds();
  static constexpr bool groups = storage::keys.groups || storage::values.groups;
  /// Formats that quantize rows in chunks see every step, even those a long append overwrites at once.
  static constexpr bool stepwise = storage::keys.chunk() > 1 || storage::values.chunk() > 1;

 public:
  using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  basic_ring(std::size_t window, std::size_t d_k, std::size_t d_v)
      : k_(static_cast<Eigen::Index>(window), static_cast<Eigen::Index>(d_k)),
        v_(static_cast<Eigen::Index>(window), static_cast<Eigen::Index>(d_v)),
        ks_(storage::keys, formats ? window : 0, d_k, 1),
        vs_(storage::values, formats ? window : 0, d_v, 1) {
    if (window == 0 || d_k == 0 || d_v == 0) throw shape_error("ring: window, d_k and d_v must be positive");
  }

  /// Appends one step (1-D) or n steps (2-D), crossing the wrap point as needed.
  void append(array_view k, array_view v) {
    const steps_of ks(k), vs(v);
    if (!ks.ok || !vs.ok) throw shape_error("append: k and v must be 1-D or 2-D");
    if (ks.width != d_k() || vs.width != d_v()) throw shape_error("append: wrong width");
    if (ks.steps != vs.steps) throw shape_error("append: k and v differ in steps");
    const auto [first, last] = stepwise ? std::pair<std::size_t, std::size_t>{0, ks.steps} : Rules::kept(ks.steps, window());
    for (std::size_t i = first; i < last; ++i) {
      const std::size_t p = static_cast<std::size_t>(total_) + i;
      const auto slot = static_cast<Eigen::Index>(p % window());
      if constexpr (formats) {
        store(ks_, kst_, k_, p, k.data + i * d_k(), i + 1 == last);
        store(vs_, vst_, v_, p, v.data + i * d_v(), i + 1 == last);
      } else {
        k_.row(slot) = Eigen::Map<const Eigen::RowVectorXd>(k.data + i * d_k(), static_cast<Eigen::Index>(d_k()));
        v_.row(slot) = Eigen::Map<const Eigen::RowVectorXd>(v.data + i * d_v(), static_cast<Eigen::Index>(d_v()));
      }
    }
    total_ += static_cast<std::int64_t>(ks.steps);
  }

  /// The per-tensor scales of a scaled element format (docs/numerics.md §6.1).
  void set_scales(double k_scale, double v_scale)
    requires(storage::keys.scaled || storage::values.scaled)
  {
    ks_.set_scale(k_scale), vs_.set_scale(v_scale);
  }
  /// Integer groups: the scales and minima of the held quantized rows, oldest first (docs/numerics.md §6.2).
  Eigen::MatrixXd key_scales() const requires groups { return exposed(ks_, kst_, false); }
  Eigen::MatrixXd key_zeros() const requires groups { return exposed(ks_, kst_, true); }
  Eigen::MatrixXd value_scales() const requires groups { return exposed(vs_, vst_, false); }
  Eigen::MatrixXd value_zeros() const requires groups { return exposed(vs_, vst_, true); }

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
  row_matrix logical(const row_matrix& m) const {
    row_matrix out(static_cast<Eigen::Index>(size()), m.cols());
    for (std::size_t i = 0; i < size(); ++i)
      out.row(static_cast<Eigen::Index>(i)) = m.row(static_cast<Eigen::Index>(slot(i)));
    return out;
  }
  /// Writes absolute step p (slot p mod W); the window then holds steps (p - W, p].
  void store(side& s, stream_state& st, row_matrix& m, std::size_t p, const double* in, bool call_ends) {
    const std::size_t w = window();
    if (st.appended < p) st.appended = st.quantized = p;  // steps a long append overwrote, quantized on arrival
    double* out = m.data() + (p % w) * static_cast<std::size_t>(m.cols());
    s.append(st, p % w, in, out, call_ends, [&](std::size_t i) {
      const bool held = i <= p && i + w > p;
      return typename side::row_at{i % w, held ? m.data() + (i % w) * static_cast<std::size_t>(m.cols()) : nullptr};
    });
    s.evicted(st, p + 1 > w ? p + 1 - w : 0);
  }
  Eigen::MatrixXd exposed(const side& s, const stream_state& st, bool zeros) const {
    const std::size_t held = size(), first = static_cast<std::size_t>(total_) - held;
    return group_matrix(s, st, first, held, [&](std::size_t i) { return slot(i); }, zeros);
  }

  row_matrix k_, v_;
  std::int64_t total_ = 0;
  side ks_, vs_;
  stream_state kst_, vst_;
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
