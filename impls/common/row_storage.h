// The storage policy of every reference cache: one side's rows in its declared format, coded, with groups and residual.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <deque>
#include <vector>

#include "impls/common/group_codec.h"

namespace kvconform {

/// A per-channel group of a stream: its first row and row count (rows counted from the stream's
/// first append) and each channel's stored scale and minimum.
struct channel_group {
  std::size_t first = 0, count = 0;
  std::vector<double> scales, zeros;
};
/// Where a stream stands: rows appended (less those rolled back), rows [0, quantized) quantized,
/// and its per-channel groups.
struct stream_state {
  std::size_t appended = 0, quantized = 0;
  std::deque<channel_group> groups;
};

/// The rules of a correct cache: a chunk is quantized as soon as it is complete; a new per-channel
/// group gets its own scales.
struct storage_rules : group_rules {
  static bool chunk_due(std::size_t pending, std::size_t chunk, bool /*call_ends*/) { return pending == chunk; }
  static constexpr bool stale_channel_scales = false;
};

/// One side (keys or values) of a cache: `slots` rows of `width` values in format F, with codes
/// and per-token scales kept per slot. The cache keeps the values it exposes (and attends over)
/// in its own layout; this class writes them, and quantizes a stream's rows once a chunk of them
/// has gathered (docs/numerics.md §6.2). `at(i)` gives row i of a stream as {slot, exposed row},
/// the row null once a window evicted it.
template <class Rules = storage_rules>
class side_storage {
 public:
  struct row_at {
    std::size_t slot;
    double* row;
  };
  side_storage(const storage_format& f, std::size_t slots, std::size_t width, double scale)
      : f_(f), width_(width), scale_(scale), groups_(f.groups && f.axis == group_axis::token ? ngroups() : 0) {
    if (f.groups) codes_.assign(slots, row_codes<Rules>(f, width));
    scales_.assign(slots * groups_, 0.0), zeros_.assign(slots * groups_, 0.0);
  }
  const storage_format& format() const { return f_; }
  /// The per-tensor scale of a scaled element format (from the cache config).
  void set_scale(double s) { scale_ = s; }

  /// Appends one row to stream `s` into `slot`; `out` is its exposed row. `call_ends` is true for
  /// the last row of the caller's append.
  template <class At>
  void append(stream_state& s, std::size_t /*slot*/, const double* in, double* out, bool call_ends, At at) {
    if (!f_.groups) {
      for (std::size_t j = 0; j < width_; ++j)
        out[j] = f_.scaled ? Rules::store_scaled(f_, in[j], scale_) : Rules::store(f_, in[j]);
      return;
    }
    for (std::size_t j = 0; j < width_; ++j) out[j] = Rules::store({.element = f_.element}, in[j]);
    ++s.appended;
    if (Rules::chunk_due(s.appended - s.quantized, f_.chunk(), call_ends)) quantize(s, at);
  }

  /// Keeps the first `rows` rows of `s` (a rollback): quantized rows keep their codes and groups.
  void truncate(stream_state& s, std::size_t rows) const {
    s.appended = rows, s.quantized = std::min(s.quantized, rows);
    while (!s.groups.empty() && s.groups.back().first >= rows) s.groups.pop_back();
    if (!s.groups.empty()) s.groups.back().count = std::min(s.groups.back().count, rows - s.groups.back().first);
  }
  /// Forgets the per-channel groups of `s` none of whose rows is at or after `first_held`.
  void evicted(stream_state& s, std::size_t first_held) const {
    while (!s.groups.empty() && s.groups.front().first + s.groups.front().count <= first_held) s.groups.pop_front();
  }
  /// A copy of slot `from`'s codes and scales in slot `to` (copy-on-write of a block).
  void copy_slot(std::size_t from, std::size_t to) {
    if (!f_.groups) return;
    codes_[to] = codes_[from];
    for (std::size_t g = 0; g < groups_; ++g)
      scales_[to * groups_ + g] = scales_[from * groups_ + g], zeros_[to * groups_ + g] = zeros_[from * groups_ + g];
  }

  /// What a cache exposes about its groups: per-token, the scales (and minima) of the quantized rows
  /// in `slots`; per-channel, those of every group of `s` with a held row among the first `held_quantized`.
  void token_groups(std::size_t slot, std::vector<double>& scales, std::vector<double>& zeros) const {
    for (std::size_t g = 0; g < groups_; ++g) {
      scales.push_back(scales_[slot * groups_ + g]);
      if (!f_.symmetric) zeros.push_back(zeros_[slot * groups_ + g]);
    }
  }
  /// A row's codes and per-token scales, for a decode that works on the codes themselves.
  long code(std::size_t slot, std::size_t j) const { return codes_[slot].get(j); }
  double token_scale(std::size_t slot, std::size_t g) const { return scales_[slot * groups_ + g]; }
  double token_zero(std::size_t slot, std::size_t g) const { return zeros_[slot * groups_ + g]; }
  /// The per-token group of element j, and the number of groups along a row.
  std::size_t group_of(std::size_t j) const {
    std::size_t g = 0;
    while (g + 1 < groups_ && Rules::group_first(g + 1, f_.group) <= j) ++g;
    return g;
  }
  std::size_t ngroups() const { return (width_ + f_.group - 1) / f_.group; }
  /// Bytes `rows` rows take: element bytes, or packed codes and each group's scale (and minimum).
  std::size_t bytes(std::size_t rows) const {
    static const std::size_t element[] = {8, 4, 2, 2, 1, 1};
    if (!f_.groups) return rows * width_ * element[static_cast<int>(f_.element)];
    const std::size_t meta = element[static_cast<int>(f_.scale_format)] * (f_.symmetric ? 1 : 2);
    if (f_.axis == group_axis::token) return rows * ((width_ * f_.bits + 7) / 8 + ngroups() * meta);
    return (rows * width_ * f_.bits + 7) / 8 + (rows + f_.group - 1) / f_.group * width_ * meta;
  }

 private:
  template <class At>
  void quantize(stream_state& s, At at) {
    if (f_.axis == group_axis::token) {
      for (std::size_t i = s.quantized; i < s.appended; ++i)
        if (const row_at r = at(i); r.row) quantize_row(r.slot, r.row);
    } else {
      for (std::size_t g = s.quantized; g < s.appended; g += f_.group) quantize_channels(s, g, at);
    }
    s.quantized = s.appended;
  }

  void quantize_row(std::size_t slot, double* row) {
    for (std::size_t g = 0; g < groups_; ++g) {
      const std::size_t a = std::min(Rules::group_first(g, f_.group), width_);
      const std::size_t b = g + 1 < groups_ ? std::min(Rules::group_first(g + 1, f_.group), width_) : width_;
      if (a >= b) continue;
      const auto [lo, hi] = Rules::range(b - a, [&](std::size_t i) { return row[a + i]; });
      const double d = Rules::scale(f_, lo, hi), z = f_.symmetric ? 0.0 : Rules::zero(f_, lo);
      scales_[slot * groups_ + g] = d, zeros_[slot * groups_ + g] = z;
      for (std::size_t j = a; j < b; ++j) {
        const long c = Rules::code(f_, row[j], d, z);
        codes_[slot].set(j, c);
        row[j] = Rules::value(static_cast<double>(codes_[slot].get(j)), d, z);
      }
    }
  }

  template <class At>
  void quantize_channels(stream_state& s, std::size_t first, At at) {
    channel_group cg{first, std::min(f_.group, s.appended - first), {}, {}};
    std::vector<row_at> rows;
    for (std::size_t i = first; i < first + cg.count; ++i)
      if (const row_at r = at(i); r.row) rows.push_back(r);
    if (rows.empty()) return;
    for (std::size_t j = 0; j < width_; ++j) {
      const auto [lo, hi] = Rules::range(rows.size(), [&](std::size_t i) { return rows[i].row[j]; });
      double d = Rules::scale(f_, lo, hi), z = f_.symmetric ? 0.0 : Rules::zero(f_, lo);
      if (Rules::stale_channel_scales && !s.groups.empty()) d = s.groups.back().scales[j], z = s.groups.back().zeros[j];
      cg.scales.push_back(d), cg.zeros.push_back(z);
      for (const row_at& r : rows) {
        codes_[r.slot].set(j, Rules::code(f_, r.row[j], d, z));
        r.row[j] = Rules::value(static_cast<double>(codes_[r.slot].get(j)), d, z);
      }
    }
    s.groups.push_back(std::move(cg));
  }

  storage_format f_;
  std::size_t width_;
  double scale_;
  std::size_t groups_;  // per-token groups along a row (0 for element formats and per-channel groups)
  std::vector<row_codes<Rules>> codes_;
  std::vector<double> scales_, zeros_;  // slot x group
};

/// A reference cache's storage: the formats of its keys and values and the rules it stores them by.
template <storage_format K = formats::f64, storage_format V = formats::f64, class Rules = storage_rules>
struct storage_policy {
  static constexpr storage_format keys = K, values = V;
  using rules = Rules;
};

/// The scales (or, with `zeros`, the minima) a cache exposes for one side of one stream, one matrix
/// row per quantized row (per-token groups: its groups along d) or per group (per-channel: its
/// channels). `slot(i)` is the slot of held row i; `first_held` counts the rows evicted before them.
template <class Rules, class Slot>
Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> group_matrix(const side_storage<Rules>& side,
                                                                                    const stream_state& s,
                                                                                    std::size_t first_held,
                                                                                    std::size_t held, Slot slot,
                                                                                    bool zeros) {
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> m;
  const storage_format& f = side.format();
  if (!f.groups || (zeros && f.symmetric)) return m;
  const std::size_t quantized = s.quantized > first_held ? std::min(s.quantized - first_held, held) : 0;
  std::vector<double> sc, ze;
  std::size_t rows = 0, cols = 0;
  if (f.axis == group_axis::token) {
    for (std::size_t i = 0; i < quantized; ++i, ++rows) side.token_groups(slot(i), sc, ze);
    cols = side.ngroups();
  } else {
    for (const channel_group& g : s.groups)
      if (g.first < first_held + quantized && g.first + g.count > first_held)
        sc.insert(sc.end(), g.scales.begin(), g.scales.end()), ze.insert(ze.end(), g.zeros.begin(), g.zeros.end()),
            cols = g.scales.size(), ++rows;
  }
  const std::vector<double>& v = zeros ? ze : sc;
  m.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  for (std::size_t i = 0; i < v.size(); ++i) m.data()[i] = v[i];
  return m;
}

}  // namespace kvconform
