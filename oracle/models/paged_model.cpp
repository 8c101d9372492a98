// The paged specification, written independently of the caches it judges.
#include "oracle/models/paged_model.h"

namespace kvconform {

bool paged_model::make_room(const op& o, std::size_t steps, expectation& e) {
  if (!config_.preempt) return false;
  // Preemption: release the newest other sequences one at a time, on a trial copy, until the rows
  // fit; if they never do, nothing is released.
  paged_model trial = *this;
  std::vector<std::int64_t> victims;
  for (auto it = sequences().rbegin(); it != sequences().rend() && trial.room(o.seq) < steps; ++it)
    if (it->first != o.seq) victims.push_back(it->first), trial.release(it->first);
  if (trial.room(o.seq) < steps) return false;
  *this = std::move(trial);
  e.preempted = std::move(victims);
  return true;
}

void paged_model::count(snapshot& out) const {
  out.counters.emplace_back("free_blocks", static_cast<std::int64_t>(available_blocks()));
  const double block_bytes = stored_bytes(profile_.keys, config_.block_size, config_.d_k) +
                             stored_bytes(profile_.values, config_.block_size, config_.d_v);
  out.counters.emplace_back("bytes_in_use",
                            static_cast<std::int64_t>(held_blocks()) * static_cast<std::int64_t>(block_bytes));
}

}  // namespace kvconform
