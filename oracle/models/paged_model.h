// The model of the paged kind: a block pool (block_pool_model) whose appends may preempt other sequences.
#pragma once

#include "oracle/models/block_pool_model.h"

namespace kvconform {

/// A block pool in which free = capacity - blocks held. With the preempt policy, an append that
/// does not fit releases the newest other sequences first (its refusal for `capacity` then comes
/// only when even all of them would not make room).
class paged_model final : public block_pool_model {
 public:
  paged_model(const cache_config& c, const numeric_profile& p, const policy_set& policies = {})
      : block_pool_model(c, p, policies) {}

 private:
  bool make_room(const op& o, std::size_t steps, expectation& e) override;
  /// free_blocks and bytes_in_use (blocks held x the bytes block_size rows of keys and of values
  /// take in their formats, docs/numerics.md §6.3).
  void count(snapshot& out) const override;
};

}  // namespace kvconform
