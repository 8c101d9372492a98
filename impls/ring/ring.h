// The reference sliding-window (ring) KV cache: W rows, evicting the oldest, with optional attention sinks.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include "impls/common/append_steps.h"
#include "impls/common/attention.h"
#include "impls/common/formats.h"
#include "impls/common/row_storage.h"
#include "oracle/numeric/attention_semantics.h"

namespace kvconform {

/// Where a ring puts and finds rows. The first `keep` steps ever appended (attention sinks) keep
/// slots 0 .. keep - 1; every later step p shares the other W - keep slots in turn (slot keep +
/// (p - keep) mod (W - keep)). Mutants replace one of these rules (impls/ring/mutants/).
struct ring_rules {
  using storage = storage_policy<>;  ///< the formats keys and values are stored in (docs/numerics.md §6)
  /// Slots shared by the steps after the sinks.
  static std::size_t ring_part(std::size_t window, std::size_t keep) { return window - keep; }
  /// The slot held row i (oldest first, of `held`) reads, with `total` steps appended.
  static std::size_t read_slot(std::size_t i, std::int64_t total, std::size_t held, std::size_t keep,
                               std::size_t part) {
    if (i < keep) return i;
    const std::int64_t step = total - static_cast<std::int64_t>(held - i);
    return keep + static_cast<std::size_t>(step - static_cast<std::int64_t>(keep)) % part;
  }
  /// The rows [first, last) of an n-row append that are written, in order (a later row in the
  /// same slot overwrites an earlier one, so every sink row of the append is written).
  static std::pair<std::size_t, std::size_t> kept(std::size_t n, std::size_t /*window*/) { return {0, n}; }
  /// The policy rollback=before_full (docs/kinds/ring.md): every rollback refused once W steps are held, as mlx-lm's
  /// RotatingKVCache does.
  static constexpr bool rollback_before_full = false;
  /// The attention a decode computes besides the window (docs/numerics.md §7): learned sinks, a soft cap.
  static constexpr attention_semantics attention{};
};

/// Holds the first `keep` steps ever appended (attention sinks) and the last W + reserve - keep of the others,
/// oldest first, in a buffer of W + reserve rows used as a ring (no row is ever shifted); with fewer steps, all of
/// them. Decode and prefill attend the sinks and the last W - keep; the reserve lets a rollback of up to `reserve`
/// steps restore the earlier window (docs/kinds/ring.md). Appends are never refused for room; shape errors and a
/// rollback beyond what is held throw and change nothing. Formats quantized in chunks of steps (per-channel
/// groups, a residual) take no sinks.
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

  basic_ring(std::size_t window, std::size_t d_k, std::size_t d_v) : basic_ring(window, d_k, d_v, 0, 0, 0) {}
  basic_ring(std::size_t window, std::size_t d_k, std::size_t d_v, std::size_t keep) requires(!stepwise)
      : basic_ring(window, d_k, d_v, keep, 0, 0) {}
  basic_ring(std::size_t window, std::size_t d_k, std::size_t d_v, std::size_t keep,
             std::size_t reserve) requires(!stepwise)
      : basic_ring(window, d_k, d_v, keep, reserve, 0) {}

  /// Appends one step (1-D) or n steps (2-D), crossing the wrap point as needed.
  void append(array_view k, array_view v) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v());
    const auto [first, last] = stepwise ? std::pair<std::size_t, std::size_t>{0, steps} : Rules::kept(steps, slots());
    for (std::size_t i = first; i < last; ++i) {
      const std::size_t p = static_cast<std::size_t>(total_) + i;
      const auto slot = static_cast<Eigen::Index>(write_slot(p));
      if constexpr (formats) {
        store(ks_, kst_, k_, p, k.data + i * d_k(), i + 1 == last);
        store(vs_, vst_, v_, p, v.data + i * d_v(), i + 1 == last);
      } else {
        k_.row(slot) = Eigen::Map<const Eigen::RowVectorXd>(k.data + i * d_k(), static_cast<Eigen::Index>(d_k()));
        v_.row(slot) = Eigen::Map<const Eigen::RowVectorXd>(v.data + i * d_v(), static_cast<Eigen::Index>(d_v()));
      }
    }
    total_ += static_cast<std::int64_t>(steps);
    held_ = std::min(held_ + steps, slots());
  }

  /// Appends the m steps of k and v, attending with query row i of q (2-D (m, d_k)) once step i is held: over the
  /// sinks and the last W - keep steps up to it. Output (m, d_v); weights (m, size before + m) over the rows held
  /// before and the chunk's, 0 where a query does not see a row.
  decode_result prefill(array_view k, array_view v, array_view q, array_view sinks = {}) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v()), before = size();
    check_prefill_queries(q, steps, d_k());
    const score_terms t = terms(sinks);
    const std::int64_t t0 = total_;
    const std::size_t width = before + steps;
    if (before + steps <= slots()) {  // nothing leaves: every query reads the rows as they stay (integer groups)
      append(k, v);
      return attend_causal(
          steps, width, d_k(), d_v(), q.data, [&](std::size_t i) { return key_row(i); },
          [&](std::size_t i) { return value_row(i); },
          [&](std::size_t query, std::size_t row) { return row <= before + query && in_window(row, t0 + query + 1); },
          t);
    }
    decode_result r{Eigen::VectorXd::Zero(static_cast<Eigen::Index>(steps * d_v())),
                    Eigen::VectorXd::Zero(static_cast<Eigen::Index>(steps * width))};
    for (std::size_t i = 0; i < steps; ++i) {  // a long chunk evicts rows its early queries see: one step at a time
      append(array_view(k.data + i * d_k(), {d_k()}), array_view(v.data + i * d_v(), {d_v()}));
      const decode_result one = attend_window(q.data + i * d_k(), t);
      r.output.segment(static_cast<Eigen::Index>(i * d_v()), static_cast<Eigen::Index>(d_v())) = one.output;
      scatter_weights(one, t0, before, r.weights.data() + i * width);
    }
    return r;
  }

  /// Drops the newest n steps. index_error, and no change, unless every row the window then attends is still held
  /// (at most `reserve` steps once the window has filled past it).
  void rollback(std::size_t n) {
    if (n > static_cast<std::size_t>(total_)) throw index_error("rollback: fewer steps appended");
    if (Rules::rollback_before_full && static_cast<std::size_t>(total_) >= window())
      throw index_error("rollback: the window has filled");
    const std::int64_t t = total_ - static_cast<std::int64_t>(n), keep = static_cast<std::int64_t>(keep_);
    const std::int64_t first_needed = std::max(keep, t - static_cast<std::int64_t>(window()) + keep);
    const std::size_t sinks = std::min(keep_, held_);
    const std::int64_t oldest_held = total_ - static_cast<std::int64_t>(held_ - sinks);  // the oldest after the sinks
    if (first_needed < t && first_needed < oldest_held) throw index_error("rollback: beyond the reserve");
    // The held steps at or after t go: the newest of the others, and the sinks from t on.
    const std::size_t others = held_ - sinks, dropped_others = std::min<std::size_t>(others, n);
    total_ = t, held_ = sinks + others - dropped_others;
    held_ = std::min(held_, static_cast<std::size_t>(t));
    if constexpr (formats)
      ks_.truncate(kst_, static_cast<std::size_t>(t)), vs_.truncate(vst_, static_cast<std::size_t>(t));
  }

  /// One decode over the sinks and the last W - keep held rows.
  decode_result attend_window(const double* q, const score_terms& t = {}) const {
    return attend(
        size(), d_k(), d_v(), q, [&](std::size_t i) { return key_row(i); }, [&](std::size_t i) { return value_row(i); },
        [&](std::size_t i) { return in_window(i, total_); }, t);
  }
  /// The declared soft cap and learned sink of a decode or prefill (docs/numerics.md §7.1).
  static score_terms terms(array_view sinks) { return declared_terms(Rules::attention, sinks); }

  /// The per-tensor scales of a scaled element format (docs/numerics.md §6.1).
  void set_scales(double k_scale, double v_scale) requires(storage::keys.scaled || storage::values.scaled) {
    ks_.set_scale(k_scale), vs_.set_scale(v_scale);
  }
  /// Integer groups: the scales and minima of the held quantized rows, oldest first (docs/numerics.md §6.2).
  Eigen::MatrixXd key_scales() const requires groups { return exposed(ks_, kst_, false); }
  Eigen::MatrixXd key_zeros() const requires groups { return exposed(ks_, kst_, true); }
  Eigen::MatrixXd value_scales() const requires groups { return exposed(vs_, vst_, false); }
  Eigen::MatrixXd value_zeros() const requires groups { return exposed(vs_, vst_, true); }

  std::size_t size() const { return held_; }
  /// The window W the decode attends (the sinks included); slots() = W + reserve rows are held.
  std::size_t window() const { return window_; }
  std::size_t slots() const { return keep_ + part_; }
  std::size_t keep() const { return keep_; }
  std::size_t d_k() const { return static_cast<std::size_t>(k_.cols()); }
  std::size_t d_v() const { return static_cast<std::size_t>(v_.cols()); }
  /// Steps appended since creation, T.
  std::int64_t total() const { return total_; }
  /// Absolute 0-based index of each held step, oldest first: the sinks 0 .. keep - 1, then the
  /// most recent steps up to T - 1.
  std::vector<std::int64_t> positions() const {
    std::vector<std::int64_t> p;
    const std::size_t n = size();
    p.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      p.push_back(i < keep_ ? static_cast<std::int64_t>(i) : total_ - static_cast<std::int64_t>(n - i));
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

 protected:
  basic_ring(std::size_t window, std::size_t d_k, std::size_t d_v, std::size_t keep, std::size_t reserve, int)
      : keep_(keep),
        window_(window),
        part_(window > keep ? Rules::ring_part(window + reserve, keep) : 0),
        k_(row_matrix::Constant(static_cast<Eigen::Index>(keep + part_), static_cast<Eigen::Index>(d_k), nan())),
        v_(row_matrix::Constant(static_cast<Eigen::Index>(keep + part_), static_cast<Eigen::Index>(d_v), nan())),
        ks_(storage::keys, formats ? keep + part_ : 0, d_k, 1),
        vs_(storage::values, formats ? keep + part_ : 0, d_v, 1) {
    if (window == 0 || d_k == 0 || d_v == 0) throw shape_error("ring: window, d_k and d_v must be positive");
    if (keep >= window) throw shape_error("ring: keep must be less than the window");
  }
  /// Unwritten slots hold NaN, so a read of a slot no held step is in shows in decode and views.
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }
  /// Puts a decode's weights over the held rows at their columns among the `before` rows held when step t0 was
  /// next and the steps from t0 on (a prefill's weights row).
  void scatter_weights(const decode_result& one, std::int64_t t0, std::size_t before, double* row) const {
    const std::vector<std::int64_t> pos = positions();
    for (std::size_t h = 0; h < pos.size(); ++h) {
      const std::int64_t p = pos[h];
      const std::size_t column = p >= t0 ? before + static_cast<std::size_t>(p - t0)
                                 : static_cast<std::size_t>(p) < std::min(keep_, before)
                                     ? static_cast<std::size_t>(p)
                                     : before - static_cast<std::size_t>(t0 - p);
      row[column] = one.weights[static_cast<Eigen::Index>(h)];
    }
  }
  /// Whether held row i is attended with t steps appended: a sink, or among the last W - keep.
  bool in_window(std::size_t i, std::int64_t t) const {
    const std::int64_t p =
        i < keep_ ? static_cast<std::int64_t>(i) : total_ - static_cast<std::int64_t>(size() - i);  // its step
    return p < static_cast<std::int64_t>(keep_) || p >= t - static_cast<std::int64_t>(window_ - keep_);
  }
  std::size_t write_slot(std::size_t step) const { return step < keep_ ? step : keep_ + (step - keep_) % part_; }
  /// Whether step i is held once step p is written.
  bool held_after(std::size_t i, std::size_t p) const { return i <= p && (i < keep_ || i + part_ > p); }
  std::size_t slot(std::size_t i) const {
    // Until the first wrap the held rows sit in slots 0 .. size - 1 in order.
    if (total_ <= static_cast<std::int64_t>(slots()) && held_ == static_cast<std::size_t>(total_)) return i;
    return Rules::read_slot(i, total_, size(), keep_, part_);
  }
  /// Rows whose slots follow each other are copied as one block (the sinks, then the ring from its
  /// oldest row, then the rest): a copy per row would make every observation of a long window
  /// cost a division per row.
  row_matrix logical(const row_matrix& m) const {
    const std::size_t n = size();
    row_matrix out(static_cast<Eigen::Index>(n), m.cols());
    for (std::size_t i = 0; i < n;) {
      const std::size_t first = slot(i);
      std::size_t run = 1;
      while (i + run < n && run_continues(i + run, first + run)) ++run;
      // Consecutive rows of a row-major matrix are one contiguous block.
      std::copy_n(m.data() + first * d(m), run * d(m), out.data() + i * d(m));
      i += run;
    }
    return out;
  }
  /// Whether held row i sits in `expected`, the slot after its predecessor's. With the standard
  /// rules that holds up to the end of the sinks and of the ring part, known without a division;
  /// other rules (the mutants') ask slot() for every row.
  static std::size_t d(const row_matrix& m) { return static_cast<std::size_t>(m.cols()); }
  bool run_continues(std::size_t i, std::size_t expected) const {
    if constexpr (std::is_same_v<Rules, ring_rules>)
      return expected < slots() && i != keep_;
    else
      return slot(i) == expected;
  }
  /// Writes absolute step p into its slot; the window then holds the sinks and steps (p - (W - keep), p].
  void store(side& s, stream_state& st, row_matrix& m, std::size_t p, const double* in, bool call_ends) {
    const std::size_t w = slots(), cols = static_cast<std::size_t>(m.cols());
    if (st.appended < p) st.appended = st.quantized = p;  // steps a long append overwrote, quantized on arrival
    s.append(st, write_slot(p), in, m.data() + write_slot(p) * cols, call_ends, [&](std::size_t i) {
      return typename side::row_at{write_slot(i), held_after(i, p) ? m.data() + write_slot(i) * cols : nullptr};
    });
    s.evicted(st, p + 1 > w ? p + 1 - w : 0);  // per-channel groups: only without sinks (chunked formats)
  }
  Eigen::MatrixXd exposed(const side& s, const stream_state& st, bool zeros) const {
    const std::size_t held = size(), first = static_cast<std::size_t>(total_) - held;
    return group_matrix(
        s, st, first, held, [&](std::size_t i) { return slot(i); }, zeros);
  }

  std::size_t keep_, window_, part_;
  std::size_t held_ = 0;  // rows held: min(steps appended, slots()), less those rolled back
  row_matrix k_, v_;
  std::int64_t total_ = 0;
  side ks_, vs_;
  stream_state kst_, vst_;
};

using ring = basic_ring<>;
/// The ring reference storing keys in K and values in V (impls/common/formats.h).
template <storage_format K, storage_format V = K, class Rules = storage_rules>
using ring_stored = stored<basic_ring, ring_rules, K, V, Rules>;

/// One decode step over the held rows. Throws empty_error on an empty cache and shape_error
/// unless q is 1-D of width d_k.
template <class Rules>
decode_result decode_step(array_view q, const basic_ring<Rules>& c) {
  return decode_step(q, array_view{}, c);
}
/// The same step with the decode's sink logits, which a ring declaring learned sinks attends with.
template <class Rules>
decode_result decode_step(array_view q, array_view sinks, const basic_ring<Rules>& c) {
  if (q.rank != 1 || q.dims[0] != c.d_k()) throw shape_error("decode_step: q must be 1-D of width d_k");
  const score_terms t = basic_ring<Rules>::terms(sinks);
  if (c.size() == 0) throw empty_error("decode_step: empty cache");
  return c.attend_window(q.data, t);
}

}  // namespace kvconform
