// The model of the single-sequence kinds: flat (refuses when full), ring (evicts the oldest after its sinks), growing.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "oracle/models/model.h"

namespace kvconform {

/// Exact rows, stored in the declared formats, plus the count of steps ever appended. The
/// single-sequence kinds differ in one rule, what happens when len + n > capacity: a flat cache
/// refuses; a window (ring) drops the oldest rows after its `keep` sinks, and reports each row's
/// absolute position and the total; a growing cache takes them, and reports the rows it reserves in
/// whole steps of `capacity`.
class rows_model final : public model {
 public:
  enum class full { refuse, evict, grow };
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
  std::deque<std::int64_t> positions_;  // absolute step of each held row
  std::int64_t total_ = 0;
};

}  // namespace kvconform
