// One side (keys or values) of one stream of rows as the model stores it, in the declared storage format.
#pragma once

#include <cstddef>
#include <deque>
#include <span>
#include <vector>

#include "oracle/models/row_ring.h"
#include "oracle/numeric/storage_format.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// The held rows of one side of a stream, each as given (after the profile's input rounding) and as
/// stored (docs/numerics.md §6): an element format's exact rounding, or for integer groups the
/// residual format's rounding, which a residual row must expose exactly and a quantized row is
/// quantized from. Rows are counted from the stream's first append, so that per-channel groups and
/// the residual keep their places when a window evicts rows; a rollback truncates.
class stored_rows {
 public:
  using row = std::vector<double>;
  stored_rows(const storage_format& f, std::size_t width, double scale)
      : f_(f), width_(width), scale_(scale), given_(width), stored_(width) {}

  /// Appends one row; whenever a chunk of the format's rows has gathered, it is quantized.
  void push(const row& given);
  /// Drops the oldest held row (a sliding window).
  void pop_front();
  /// Drops held row i (a window with attention sinks evicts the oldest row after them); only for
  /// formats quantized row by row, whose rows need no place among the others.
  void erase(std::size_t i);
  /// Keeps the first `rows` held rows (a rollback); quantized rows stay quantized with their groups.
  void truncate(std::size_t rows);
  std::size_t size() const { return stored_.size(); }

  /// What a snapshot shows: the stored rows (a view in place, valid until the next change), and for
  /// integer groups the ideal scales and zeros of every group with held quantized rows, the count of
  /// quantized rows and where groups start.
  void expose(row_data& rows, group_view& groups) const;
  /// Row i as stored (what a decode over an element format attends) and as given (the end-to-end figure).
  std::span<const double> stored(std::size_t i) const { return stored_[i]; }
  std::span<const double> given(std::size_t i) const { return given_[i]; }

 private:
  /// A per-channel group: its first row (counted from the first append), its row count, and each
  /// channel's least and greatest input over the rows held when it was quantized.
  struct channel_group {
    std::size_t first = 0, count = 0;
    std::vector<double> lo, hi;
  };
  void quantize_chunk();
  void expose_token_groups(group_view& g) const;

  storage_format f_;
  std::size_t width_;
  double scale_;
  row_ring given_, stored_;
  std::size_t first_ = 0;      // rows evicted before the oldest held one
  std::size_t appended_ = 0;   // rows ever appended (less those rolled back)
  std::size_t quantized_ = 0;  // rows [0, quantized_) are quantized
  std::deque<channel_group> groups_;
};

/// The two sides of one stream: keys and values, each in its own format.
struct stored_stream {
  stored_rows keys, values;
  stored_stream(const storage_format& kf, const storage_format& vf, const cache_config& c, std::size_t d_k,
                std::size_t d_v)
      : keys(kf, d_k, c.k_scale), values(vf, d_v, c.v_scale) {}
  void push(const stored_rows::row& k, const stored_rows::row& v) { keys.push(k), values.push(v); }
  std::size_t size() const { return keys.size(); }
  /// Fills a snapshot stream's rows and group views.
  void expose(stream& st) const {
    keys.expose(st.keys, st.key_groups);
    values.expose(st.values, st.value_groups);
  }
};

}  // namespace kvconform
