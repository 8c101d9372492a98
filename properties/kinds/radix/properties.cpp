// The radix kind's properties (admitted hits, writes before hits, retract and abort, lock accounting), its table row.
#include "oracle/models/radix_model.h"
#include "properties/executor/block_pool_probe.h"
#include "properties/generate/speculation_properties.h"
#include "properties/kinds/block_pool_kind.h"
#include "properties/kinds/radix/parts.h"

namespace kvconform::kinds {

namespace {
constexpr cache_kind radix = cache_kind::radix;

/// The statements every kind has: the pool's mixes (prefix's) with the kind's phases, a scheduler step now and then,
/// and short traces (prefix_mix::trace).
case_generator statement_cases(prefix_mix m) {
  m.phases = radix_phases;
  m.phases.step = 1;
  m.trace = 1;
  return radix_cases(m);
}
/// Short traces for prefill and rollback, whose rewrites run every op twice.
case_generator short_cases(prefix_mix m) {
  m.trace = 1;
  return radix_cases(m);
}
}  // namespace

void add_radix_properties(std::vector<property>& ps) {
  add_statements<prefix_mix>(ps, radix, statement_cases, {.stale = 2});
  add_phase_properties(ps, radix, radix_cases, {});
  add_property(
      ps, radix, "radix_lock_accounting",
      "after every op free + evictable + held pages = num_blocks, evictable + protected = the pages of the "
      "tree, every held page's count equals the tables holding it, and no locked page is evicted however the "
      "pool runs dry",
      radix_cases({.append = 2,
                   .fill = 2,
                   .overfill = 1,
                   .decode = 1,
                   .create = 1,
                   .reuse = 2,
                   .fork = 2,
                   .release = 2,
                   .phases = {.lookup = 2, .admit = 3, .chunk = 2, .retract = 1, .abort = 1, .stale = 1, .step = 3}}))
      .long_traces = true;
  // prefix's, with no phases where a rewrite runs: like a release, a retract or an abort may let go of blocks a
  // chunk registered that the whole prefill registers differently (docs/kinds/prefix.md)
  add_prefix_speculation(ps, radix, short_cases);
}

namespace {
/// The radix kind's own events (docs/design.md §4.6), in the order of `event_index`.
enum event_index : std::size_t {
  hit_event,
  lost_event,
  first_event,
  inside_event,
  last_event,
  retract_event,
  duplicate_event,
  locked_event,
  admit_full_event,
  waiting_abort_event,
  evict_event,
  boundary_event,
  cow_event,
  full_event,
  speculation_events
};
constexpr auto events = with_pool_speculation({
    {"admitted hit", "an admit holds cached pages of its prompt", true},
    {"hit lost before admit",
     "an admit found a shorter hit than its lookup: another request's allocation evicted pages in between", true},
    {"lookup diverging at a page's first token", "a lookup's prompt leaves a cached chain at a page's first token",
     true},
    {"lookup diverging inside a page",
     "a lookup's prompt leaves a cached chain past a page's first token, before its last", true},
    {"lookup diverging at a page's last token", "a lookup's prompt leaves a cached chain at the last token of a page",
     true},
    {"retract between chunks",
     "a retract of a sequence holding rows and pages an admit took for rows still to be written", true},
    {"duplicate insert", "a page filled under a chain the tree holds already: the table took the tree's page", true},
    {"eviction under lock pressure", "an allocation evicted a leaf while a locked run was less recently used than it",
     true},
    {"admit refused: pool exhausted", "an admit refused for capacity: free and evictable pages besides its hit", true},
    {"abort of a waiting sequence", "an abort of a sequence that was looked up and never admitted", true},
    {"eviction", "an accepted append or admit evicted a page of the tree", true},
    block_boundary_event,
    copy_on_write_event,
    {"refused: pool exhausted", "an append refused for capacity alone: free and evictable pages are too few", true},
});

struct probe final : block_pool_probe {
  explicit probe(const cache_config&) : block_pool_probe({boundary_event, cow_event, full_event, speculation_events}) {}
  void applied(const model& m, const op& o, const expectation& e, event_set& hit) override {
    const auto& pool = model_as<radix_model>(m);
    const auto& f = pool.last();
    const auto bs = static_cast<int>(pool.config().block_size);
    const std::pair<bool, std::size_t> facts[] = {
        {f.admitted_hit > 0, hit_event},
        {f.hit_lost && e.accepted, lost_event},
        {f.divergence == 0, first_event},
        {f.divergence > 0 && f.divergence + 1 < bs, inside_event},
        {bs > 1 && f.divergence + 1 == bs, last_event},
        {f.retract_mid_prefill, retract_event},
        {f.duplicate, duplicate_event},
        {f.evicted_under_lock, locked_event},
        {o.kind == op_kind::admit && !e.accepted && e.reasons == refuse_capacity, admit_full_event},
        {f.aborted_waiting, waiting_abort_event},
        {f.evicted, evict_event}};
    for (const auto& [fact, at] : facts)
      if (fact) hit.set(at);
  }
  void appended(const model&, const op&, const expectation&, event_set&) override {}
};
}  // namespace

extern const kind_spec radix_spec;
/// The kind's row of the kind table (properties/executor/kind_table.h).
extern const kind_descriptor radix_kind = block_pool_kind<radix_model>(
    radix_spec, add_radix_properties, {radix_fuzz_config, radix_fuzz_ops}, {events, make_probe<probe>});

}  // namespace kvconform::kinds
