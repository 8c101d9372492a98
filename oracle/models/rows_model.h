// The model of the single-sequence kinds: flat (refuses when full) and ring (evicts the oldest).
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/models/model.h"

namespace kvconform {

/// Exact rows in a ring of row slots plus the count of steps ever appended. Flat and ring differ in one
/// rule only: when len + n > capacity, a flat cache refuses and a window (ring) drops the oldest
/// rows; a window also reports each row's absolute position and the total.
class rows_model final : public model {
 public:
  enum class full { refuse, evict };
  rows_model(const cache_config& c, const numeric_profile& p, full rule) : config_(c), profile_(p), rule_(rule) {}

  expectation apply(const op& o) override;
  snapshot observe() const override;

  std::size_t size() const { return size_; }
  std::int64_t total() const { return total_; }
  const cache_config& config() const { return config_; }

 private:
  void push(const tensor& k, const tensor& v, std::size_t step);
  /// The held rows of `slots` (rows of `width`) in logical order: at most two block copies, so
  /// that observing a long window after every op stays cheap.
  std::vector<double> ordered(const std::vector<double>& slots, std::size_t width) const;

  cache_config config_;
  numeric_profile profile_;
  full rule_;
  std::vector<double> keys_, values_;  ///< up to capacity row slots; the oldest row is in slot first_
  std::size_t first_ = 0, size_ = 0;
  std::int64_t total_ = 0;
};

}  // namespace kvconform
