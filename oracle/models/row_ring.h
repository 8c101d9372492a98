// Rows of one width in one block of memory, dropped at the front as a window slides.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "properties/trace/trace.h"

namespace kvconform {

/// Rows kept contiguous so that a snapshot views them as one block, compared in place: a long
/// window is observed after every op, and a row per allocation made that quadratic replay slow
/// (docs/reliability.md §6).
/// Dropping the oldest row moves a start index; the space is reclaimed once half the block is dead.
class row_ring {
 public:
  explicit row_ring(std::size_t width) : width_(width) {}
  std::size_t size() const { return rows_; }
  std::span<const double> operator[](std::size_t i) const { return {data_.data() + (start_ + i) * width_, width_}; }
  std::span<double> operator[](std::size_t i) { return {data_.data() + (start_ + i) * width_, width_}; }
  void push_back(std::span<const double> r) { data_.insert(data_.end(), r.begin(), r.end()), ++rows_; }
  void pop_front() {
    --rows_;
    if (++start_ < rows_) return;
    data_.erase(data_.begin(), data_.begin() + static_cast<std::ptrdiff_t>(start_ * width_));
    start_ = 0;
  }
  /// Drops row i by moving the rows before it one place on (cheap when i, the sinks, is small).
  void erase(std::size_t i) {
    const auto first = data_.begin() + static_cast<std::ptrdiff_t>(start_ * width_);
    std::copy_backward(first, first + static_cast<std::ptrdiff_t>(i * width_),
                       first + static_cast<std::ptrdiff_t>((i + 1) * width_));
    pop_front();
  }
  void resize(std::size_t rows) { data_.resize((start_ + rows) * width_), rows_ = rows; }
  /// Appends every held row to `out`, oldest first, as one view in place (valid until the next change).
  void view_into(row_data& out) const { out.add(data_.data() + start_ * width_, rows_ * width_); }

 private:
  std::size_t width_;
  std::vector<double> data_;
  std::size_t start_ = 0;  // rows dropped at the front whose space is not reclaimed yet
  std::size_t rows_ = 0;
};

}  // namespace kvconform
