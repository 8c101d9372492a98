// The coverage probe the block-pool kinds (paged, prefix) share: what an append did to the sequence it names.
#pragma once

#include <algorithm>
#include <cstddef>

#include "oracle/models/block_pool_model.h"
#include "properties/executor/coverage.h"

namespace kvconform {

/// The events every pool has besides its refusal for room, whose wording is the kind's.
inline constexpr event block_boundary_event{"block boundary crossed",
                                            "an accepted append writes rows into two or more blocks", true};
inline constexpr event copy_on_write_event{
    "copy-on-write", "an accepted append to a sequence whose partly filled last block another table holds", true};

/// Marks the events every pool has (docs/design.md §4.6), at the kind's own indices: an append
/// refused for capacity alone, and an accepted one that writes into two or more blocks or copies
/// its sequence's shared, partly filled last block first. A kind's probe marks its own events in
/// `observe` (before any op), `appended` (after an accepted append that added rows) and `applied`
/// (after every op).
class block_pool_probe : public event_probe {
 public:
  struct indices {
    std::size_t boundary, copy_on_write, refused_full;
  };
  explicit block_pool_probe(indices at) : at_(at) {}

  void before(const model& m, const op& o) final {
    const auto& pool = model_as<block_pool_model>(m);
    const auto live = pool.live();
    const bool known = o.kind == op_kind::append && std::binary_search(live.begin(), live.end(), o.seq);
    before_size_ = known ? pool.size(o.seq) : 0, copies_ = known && pool.copies_on_append(o.seq);
    observe(m);
  }
  void after(const model& m, const op& o, const expectation& e, event_set& hit) final {
    const auto& pool = model_as<block_pool_model>(m);
    applied(m, o, hit);
    if (o.kind != op_kind::append) return;
    if (!e.accepted && e.reasons == refuse_capacity) hit.set(at_.refused_full);
    const std::size_t bs = pool.config().block_size, size = e.accepted ? pool.size(o.seq) : before_size_;
    if (!e.accepted || size == before_size_) return;
    if (before_size_ / bs != (size - 1) / bs) hit.set(at_.boundary);
    if (copies_) hit.set(at_.copy_on_write);
    appended(m, o, e, hit);
  }

 protected:
  virtual void observe(const model& m) { (void)m; }
  virtual void applied(const model& m, const op& o, event_set& hit) { (void)m, (void)o, (void)hit; }
  virtual void appended(const model& m, const op& o, const expectation& e, event_set& hit) = 0;

 private:
  indices at_;
  std::size_t before_size_ = 0;
  bool copies_ = false;
};

}  // namespace kvconform
