// The coverage probe the block-pool kinds (paged, prefix) share: what an append did to the sequence it names.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

#include "oracle/models/block_pool_model.h"
#include "properties/executor/coverage.h"
#include "properties/executor/speculation_events.h"

namespace kvconform {

/// The events every pool has besides its refusal for room, whose wording is the kind's.
inline constexpr event block_boundary_event{"block boundary crossed",
                                            "an accepted append writes rows into two or more blocks", true};
inline constexpr event copy_on_write_event{
    "copy-on-write", "an accepted append to a sequence whose partly filled last block another table holds", true};

inline bool prefills(const implementation& i) { return i.capabilities.has(capability::prefill); }
/// The speculation events of a pool, after the three every kind with rollback has (speculation_events.h).
inline constexpr event chunk_straddles_event{"chunk straddling a block boundary",
                                             "an accepted prefill writes rows into two or more blocks", true, prefills};
inline constexpr event rollback_across_event{
    "rollback across a block boundary", "an accepted rollback drops rows of two or more blocks", true, has_rollback};
inline constexpr event rollback_shared_event{
    "rollback into a shared block",
    "an accepted rollback leaves the sequence's last block partly filled while another table holds it", true,
    has_rollback};

inline bool keeps_rolled_back(const implementation& i) { return i.policies.is("rollback_blocks", "kept"); }
inline constexpr event rollback_kept_event{
    "rollback kept blocks past the end",
    "an accepted rollback leaves blocks past the sequence's new end in its table (rollback_blocks=kept)", true,
    keeps_rolled_back};

/// A pool kind's events: its own, then the six speculation events and the kept blocks of a rollback, in the order
/// block_pool_probe marks them.
template <std::size_t N>
constexpr std::array<event, N + 7> with_pool_speculation(const event (&own)[N]) {
  std::array<event, N + 7> all{};
  std::copy(own, own + N, all.begin());
  const event speculation[] = {rollback_to_empty_event, accept_all_event,      reject_all_event,
                               chunk_straddles_event,   rollback_across_event, rollback_shared_event,
                               rollback_kept_event};
  std::copy(speculation, speculation + 7, all.begin() + N);
  return all;
}

/// Marks the events every pool has (docs/design.md §4.6), at the kind's own indices: an append
/// refused for capacity alone, and an accepted one that writes into two or more blocks or copies
/// its sequence's shared, partly filled last block first. A kind's probe marks its own events in
/// `observe` (before any op), `appended` (after an accepted append that added rows) and `applied`
/// (after every op).
class block_pool_probe : public event_probe {
 public:
  /// `speculation`: where rollback to empty, accept-all, reject-all, chunk straddling, rollback across, rollback
  /// into a shared block and kept blocks stand, in that order.
  struct indices {
    std::size_t boundary, copy_on_write, refused_full, speculation;
  };
  explicit block_pool_probe(indices at) : at_(at) {}

  void before(const model& m, const op& o) final {
    const auto& pool = model_as<block_pool_model>(m);
    const auto live = pool.live();
    const bool known = std::binary_search(live.begin(), live.end(), o.seq);
    before_size_ = known ? pool.size(o.seq) : 0, copies_ = known && pool.copies_on_append(o.seq);
    observe(m);
  }
  void after(const model& m, const op& o, const expectation& e, event_set& hit) final {
    const auto& pool = model_as<block_pool_model>(m);
    applied(m, o, e, hit);
    if (o.kind == op_kind::rollback) return rolled_back(pool, o, e, hit);
    if (o.kind == op_kind::prefill) speculation_.after(o, e, 0, hit, at_.speculation);
    if (o.kind != op_kind::append && o.kind != op_kind::prefill) return;
    if (!e.accepted && e.reasons == refuse_capacity) hit.set(at_.refused_full);
    const std::size_t bs = pool.config().block_size, size = e.accepted ? pool.size(o.seq) : before_size_;
    if (!e.accepted || size == before_size_) return;
    if (before_size_ / bs != (size - 1) / bs) hit.set(o.kind == op_kind::prefill ? at_.speculation + 3 : at_.boundary);
    if (copies_) hit.set(at_.copy_on_write);
    appended(m, o, e, hit);
  }

 protected:
  virtual void observe(const model& m) { (void)m; }
  virtual void applied(const model& m, const op& o, const expectation& e, event_set& hit) {
    (void)m, (void)o, (void)e, (void)hit;
  }
  virtual void appended(const model& m, const op& o, const expectation& e, event_set& hit) = 0;

 private:
  void rolled_back(const block_pool_model& pool, const op& o, const expectation& e, event_set& hit) {
    if (!e.accepted) return speculation_.after(o, e, 0, hit, at_.speculation);
    const std::size_t bs = pool.config().block_size, size = pool.size(o.seq);
    speculation_.after(o, e, size, hit, at_.speculation);
    if (size < before_size_ && (before_size_ - 1) / bs > size / bs) hit.set(at_.speculation + 4);
    if (pool.shares_last_block(o.seq)) hit.set(at_.speculation + 5);
    if (pool.kept_blocks(o.seq) > 0) hit.set(at_.speculation + 6);
  }

  indices at_;
  std::size_t before_size_ = 0;
  bool copies_ = false;
  speculation_probe speculation_;
};

}  // namespace kvconform
