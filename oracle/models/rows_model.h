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
/// whole steps of `capacity`. A prefill is an append whose steps each attend causally; a rollback drops the newest
/// steps. A window with a `reserve` holds W + reserve rows and attends the last W (after the sinks), so that a
/// rollback of up to reserve steps restores the earlier window.
class rows_model final : public model {
 public:
  enum class full { refuse, evict, grow };
  /// `policies`: a ring's `rollback` (docs/kinds/ring.md).
  rows_model(const cache_config& c, const numeric_profile& p, full rule, const policy_set& policies = {})
      : config_(c),
        profile_(p),
        rule_(rule),
        before_full_(policies.is("rollback", "before_full")),
        rows_(p.keys, p.values, c, c.d_k, c.d_v) {}

  expectation apply(const op& o) override;
  snapshot observe() const override;

  std::size_t size() const { return rows_.size(); }
  std::int64_t total() const { return total_; }
  /// The steps of the last op when it was an accepted prefill (the drafts a rollback may reject), else 0.
  std::size_t drafts() const { return drafts_; }
  const cache_config& config() const { return config_; }
  const numeric_profile& profile() const { return profile_; }
  /// Whether the row at absolute step `row` is attended by the query of step `query`.
  bool sees(std::int64_t row, std::int64_t query) const;
  /// Whether a rollback of n steps is accepted: no more than held, and a window's earlier rows still held.
  bool can_roll_back(std::int64_t n) const;

 private:
  expectation apply_op(const op& o);
  std::size_t held_limit() const;
  void push(const op& o, std::size_t i);
  void prefill(const op& o, std::size_t m, expectation& e);
  std::vector<unsigned char> live_for(std::int64_t query, const std::vector<std::int64_t>& positions) const;

  cache_config config_;
  numeric_profile profile_;
  full rule_;
  bool before_full_;  // a ring that refuses every rollback once it has held W steps (mlx-lm)
  stored_stream rows_;
  std::deque<std::int64_t> positions_;  // absolute step of each held row
  std::vector<std::vector<double>> index_rows_;  // sparse top-k: each held row's index key as stored
  std::int64_t total_ = 0;
  std::size_t drafts_ = 0;
};

}  // namespace kvconform
