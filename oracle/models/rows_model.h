// The model of the single-sequence kinds: flat (refuses when full) and ring (evicts the oldest).
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/models/model.h"

namespace kvconform {

/// Exact rows in a deque plus the count of steps ever appended. Flat and ring differ in one
/// rule only: when len + n > capacity, a flat cache refuses and a window (ring) drops the oldest
/// rows; a window also reports each row's absolute position and the total.
class rows_model final : public model {
 public:
  enum class full { refuse, evict };
  rows_model(const cache_config& c, const numeric_profile& p, full rule)
      : config_(c), profile_(p), rule_(rule), rows_(p.keys, p.values, c, c.d_k, c.d_v) {}

  expectation apply(const op& o) override;
  snapshot observe() const override;

  std::size_t size() const { return rows_.size(); }
  std::int64_t total() const { return total_; }
  const cache_config& config() const { return config_; }

 private:
  cache_config config_;
  numeric_profile profile_;
  full rule_;
  stored_stream rows_;
  std::int64_t total_ = 0;
};

}  // namespace kvconform
