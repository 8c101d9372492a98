// The paged kind's properties (what traces each generates; the executor judges every op) and its table row.
#include "oracle/models/paged_model.h"
#include "properties/executor/block_pool_probe.h"
#include "properties/kinds/block_pool_kind.h"
#include "properties/kinds/paged/parts.h"
#include "properties/kinds/paged/pool_speculation_properties.h"

namespace kvconform::kinds {

// Block accounting, sharing and reference counts are compared with the model after every op
// (trace.h, diff), and preemption victims with the model's (executor); so each property here
// is a choice of traces that drives the cache into the situation it names.
namespace {
namespace summaries {
constexpr const char* accounting =
    "after every op free + in-use = num_blocks and every block's reference count equals the number of tables holding "
    "it (no leak, no double free)";
constexpr const char* isolation =
    "every sequence's rows equal the model after every op: a write to one never changes another, also after fork";
constexpr const char* copy_on_write =
    "an append copies a shared last block exactly when it is partly filled; block tables share exactly what the model "
    "shares";
constexpr const char* exact_fill =
    "an append that uses the last free slot of the last free block is accepted; one row more is refused";
constexpr const char* reused =
    "released blocks go back to the pool and are handed out again: filling, releasing and refilling never runs short";
constexpr const char* preemption =
    "an append that does not fit releases exactly the newest other sequences it needs and leaves the pool consistent; "
    "if even all of them would not make room, it is refused and releases nothing";
constexpr const char* memory =
    "bytes in use equal in-use blocks x block bytes after every op: nothing is reserved per sequence or per maximum "
    "length";
}  // namespace summaries

/// Sequences come and go: forks, releases and refusals around a pool that runs dry (in long cases,
/// a pool of more than 2^16 blocks).
constexpr paged_mix churn{.append = 4,
                          .fill = 2,
                          .overfill = 2,
                          .decode = 0,
                          .create = 2,
                          .fork = 3,
                          .release = 3,
                          .stale = 1,
                          .huge_pools = true};
}  // namespace

void add_paged_properties(std::vector<property>& ps) {
  constexpr cache_kind paged = cache_kind::paged;
  add_statements<paged_mix>(ps, paged, paged_cases, {.stale = 2});
  auto own = [&](const char* name, const char* summary, paged_mix mix) -> property& {
    return add_property(ps, paged, name, summary, paged_cases(mix));
  };
  own("paged_block_accounting", summaries::accounting, churn).long_traces = true;
  own("paged_sequence_isolation", summaries::isolation,
      {.append = 6, .fill = 1, .decode = 2, .create = 1, .fork = 3, .release = 1});
  own("paged_copy_on_write", summaries::copy_on_write,
      {.append = 6, .decode = 1, .create = 1, .fork = 4, .release = 1});
  own("paged_exact_fill", summaries::exact_fill, {.append = 2, .fill = 4, .overfill = 3, .decode = 1});
  own("paged_blocks_reused", summaries::reused,
      {.append = 3, .fill = 3, .overfill = 1, .decode = 1, .create = 2, .release = 3})
      .long_traces = true;
  own("paged_preemption", summaries::preemption,
      {.append = 3, .fill = 2, .overfill = 4, .decode = 1, .create = 3, .fork = 2})
      .needs = {capability::preempt};
  own("paged_memory_in_use", summaries::memory, {.append = 3, .decode = 0, .create = 4, .fork = 2, .release = 2});
  add_pool_speculation_properties(ps, paged, paged_cases);
  own("paged_rollback_sibling_intact",
      "a rollback of a forked sequence leaves every sibling bit-identical: blocks past its end are released only by "
      "it, and a shared block it keeps partly filled is copied before its next append",
      {.append = 1, .decode = 1, .fork = 1, .release = 0, .speculation = {.rollback = 1, .shared_rollback = 8}})
      .needs = {capability::rollback};
}

namespace {
/// The paged kind's own boundary events (docs/design.md §4.6), in the order of `event_index`.
enum event_index : std::size_t {
  exact_fill_event,
  boundary_event,
  cow_event,
  preempt_event,
  full_event,
  huge_event,
  speculation_events
};
constexpr auto events = with_pool_speculation({
    {"exact fill", "an accepted append takes the pool's last free slot: no free block, the last block full", true},
    block_boundary_event,
    copy_on_write_event,
    {"preemption", "an accepted append releases other sequences to fit", true,
     [](const implementation& i) { return i.capabilities.has(capability::preempt); }},
    {"refused: pool exhausted", "an append refused for capacity alone: the pool lacks the blocks", true},
    {"pool past 2^16 blocks", "a pool of more than 65536 blocks, whose numbers need more than 16 bits (a long case)",
     true, [](const implementation& i) { return unlimited(i) && huge_pools(churn, i); },
     [](const cache_config& c) { return c.capacity > std::size_t{1} << 16; }},
});

/// The pool's events, and whether an append took the last free slot or preempted.
struct probe final : block_pool_probe {
  explicit probe(const cache_config&) : block_pool_probe({boundary_event, cow_event, full_event, speculation_events}) {}
  void appended(const model& m, const op& o, const expectation& e, event_set& hit) override {
    const auto& pool = model_as<paged_model>(m);
    if (pool.available_blocks() == 0 && pool.size(o.seq) % pool.config().block_size == 0) hit.set(exact_fill_event);
    if (!e.preempted.empty()) hit.set(preempt_event);
  }
};
}  // namespace

/// The kind's row of the kind table (properties/executor/kind_table.h).
extern const kind_spec paged_spec;
extern const kind_descriptor paged_kind = block_pool_kind<paged_model>(
    paged_spec, add_paged_properties, {paged_fuzz_config, paged_fuzz_ops}, {events, make_probe<probe>});

}  // namespace kvconform::kinds
