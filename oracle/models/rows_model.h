// The model of the single-sequence kinds: flat (refuses when full) and ring (evicts the oldest).
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/models/model.h"

namespace kvconform {

/// Exact rows in row slots plus the count of steps ever appended. The single-sequence kinds differ
/// in one rule, what happens when len + n > capacity: a flat cache refuses; a window (ring) drops
/// the oldest rows after its `keep` sinks, and reports each row's absolute position and the total;
/// a growing cache takes them, and reports the rows it reserves in whole steps of `capacity`.
class rows_model final : public model {
 public:
  enum class full { refuse, evict, grow };
  rows_model(const cache_config& c, const numeric_profile& p, full rule) : config_(c), profile_(p), rule_(rule) {}

  expectation apply(const op& o) override;
  snapshot observe() const override;

  std::size_t size() const { return size_; }
  std::int64_t total() const { return total_; }
  const cache_config& config() const { return config_; }

 private:
  void push(const tensor& k, const tensor& v, std::size_t step);
  /// The held rows of `slots` (rows of `width`) in logical order: at most three block copies, so
  /// that observing a long window after every op stays cheap.
  std::vector<double> ordered(const std::vector<double>& slots, std::size_t width) const;

  cache_config config_;
  numeric_profile profile_;
  full rule_;
  // One row per slot: the sinks in slots 0 .. keep - 1, then, once a window is full, a ring of the
  // other slots whose oldest row is in slot keep + first_.
  std::vector<double> keys_, values_;
  std::size_t first_ = 0, size_ = 0;
  std::int64_t total_ = 0;
};

}  // namespace kvconform
