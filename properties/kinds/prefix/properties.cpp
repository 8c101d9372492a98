// The prefix kind's properties (hits, rows from the cache, LRU eviction, held blocks, accounting) and its table row.
#include <set>

#include "oracle/models/prefix_model.h"
#include "properties/executor/block_pool_probe.h"
#include "properties/generate/speculation_properties.h"
#include "properties/kinds/block_pool_kind.h"
#include "properties/kinds/prefix/parts.h"

namespace kvconform::kinds {

namespace {
constexpr cache_kind prefix = cache_kind::prefix;

namespace summaries {
constexpr const char* hits =
    "a create finds exactly the cached full blocks of the longest cached prefix of its tokens (hit_rows), never a "
    "partly filled block, never a block registered under another prefix";
constexpr const char* rows =
    "a sequence created from cached blocks holds exactly the rows appended with those tokens, as if appended again";
constexpr const char* lru =
    "when the free blocks run out, the least recently released evictable block goes first, also after a block was "
    "reused and released again; an evicted prefix is no longer found";
constexpr const char* held = "no block a table still holds is evicted: forks keep their rows however the pool runs dry";
constexpr const char* accounting =
    "after every op free + evictable + held = num_blocks and every held block's count equals the tables holding it";
}  // namespace summaries

/// The statements' cases: short traces, as they need no pool history (prefix_mix::trace).
case_generator statement_cases(prefix_mix m) {
  m.trace = 1;
  return prefix_cases(m);
}

/// Lookups of prefixes held before, among creates, releases and fills that run the pool dry.
constexpr prefix_mix lookups{.append = 4, .fill = 2, .decode = 1, .create = 1, .reuse = 4, .fork = 1, .release = 3};
}  // namespace

void add_prefix_speculation(std::vector<property>& ps, cache_kind kind, case_generator (*cases)(prefix_mix)) {
  // No releases or rollbacks where a rewrite runs: with evictable blocks, a chunk may register a block whose prefix
  // a later chunk's eviction frees, which the whole prefill registers (docs/kinds/prefix.md).
  add_speculation_properties<prefix_mix>(
      ps, kind, cases,
      {.chunked = {.append = 2, .decode = 1, .reuse = 2, .fork = 1, .release = 0, .speculation = {.prefill = 6}},
       .steps = {.append = 2, .decode = 1, .reuse = 2, .fork = 1, .release = 0, .speculation = {.prefill = 6}},
       .rounds = {.append = 1,
                  .decode = 2,
                  .reuse = 2,
                  .fork = 1,
                  .speculation = {.rollback = 2, .round = 6, .block_rollback = 1}},
       .refused = {.append = 4, .decode = 1, .fork = 1, .speculation = {.rollback = 2, .bad_rollback = 5}}},
      {.straddles = "block boundaries",
       .refused = "of more steps than a sequence holds, of a negative count or of a released sequence"});
}

void add_phase_properties(std::vector<property>& ps, cache_kind kind, case_generator (*cases)(prefix_mix),
                          capability_set needs) {
  struct phase_property {
    const char* suffix;
    const char* summary;
    prefix_mix mix;
  };
  const phase_property phase_properties[] = {
      {"_admitted_hit_decodes_as_miss",
       "a hit an admit holds gives the rows and decodes of the same prompt computed with no cache, however other "
       "requests' lookups, admits and chunks come between a lookup and its admit",
       {.append = 1,
        .decode = 3,
        .create = 1,
        .reuse = 2,
        .release = 3,
        .phases = {.lookup = 2, .admit = 3, .chunk = 3, .abort = 1, .step = 6, .tails = 0b11000}}},
      {"_written_before_found",
       "a block is found by a lookup, an admit or a create only once an append has written its rows: the blocks an "
       "admit took for rows to come are never another request's hit",
       {.append = 1,
        .decode = 2,
        .create = 1,
        .reuse = 3,
        .release = 2,
        .phases = {.lookup = 4, .admit = 4, .chunk = 2, .step = 5, .tails = 0b10000}}},
      {"_retract_abort_release_blocks",
       "a retract or an abort between chunks lets go of the request's own blocks and of its hold on registered ones, "
       "which stay cached: no block is held twice, leaked or found with rows it no longer holds",
       {.append = 1,
        .decode = 2,
        .create = 1,
        .reuse = 2,
        .release = 1,
        .speculation = {.rollback = 1},  // of an admitted sequence too: its blocks past the end go, even at 0
        .phases = {.lookup = 2, .admit = 3, .chunk = 3, .retract = 3, .abort = 3, .step = 5, .tails = 0b0110}}},
  };
  for (const phase_property& p : phase_properties)
    add_property(ps, kind, to_string(kind) + std::string(p.suffix), p.summary, cases(p.mix), needs);
}

void add_prefix_properties(std::vector<property>& ps) {
  add_statements<prefix_mix>(ps, prefix, statement_cases, {.stale = 2});
  auto own = [&](const char* name, const char* summary, prefix_mix mix) -> property& {
    return add_property(ps, prefix, name, summary, prefix_cases(mix));
  };
  own("prefix_hits_longest_prefix", summaries::hits, lookups);
  own("prefix_rows_from_cache", summaries::rows,
      {.append = 4, .fill = 1, .decode = 3, .reuse = 4, .fork = 2, .release = 3});
  auto& lru = add_property(ps, prefix, "prefix_eviction_lru", summaries::lru);
  lru.drive = lru_scenario;
  lru.generate = prefix_cases({});  // configs only: the driver makes the ops
  own("prefix_referenced_never_evicted", summaries::held,
      {.append = 3, .fill = 4, .decode = 2, .create = 1, .reuse = 2, .fork = 4, .release = 3});
  own("prefix_block_accounting", summaries::accounting,
      {.append = 3,
       .fill = 2,
       .overfill = 2,
       .bad_shape = 1,
       .create = 2,
       .reuse = 2,
       .fork = 2,
       .release = 3,
       .stale = 1})
      .long_traces = true;
  add_prefix_speculation(ps, prefix, prefix_cases);
  own("prefix_hit_then_prefill",
      "a create that finds cached blocks followed by the prefill of the rest of the prompt attends exactly as the "
      "prefill of the whole prompt: rows from the cache, every query within the bound",
      {.append = 2, .decode = 1, .create = 1, .reuse = 5, .release = 2, .speculation = {.prefill = 5}})
      .needs = {capability::prefill};
  own("prefix_rollback_keeps_registered",
      "a rollback into a registered block leaves it registered and unchanged: the next append copies it, and a later "
      "create still finds its rows",
      {.append = 2,
       .decode = 1,
       .create = 1,
       .reuse = 2,
       .release = 1,
       .speculation = {.rollback = 2, .block_rollback = 6, .shared_rollback = 2}})
      .needs = {capability::rollback};
  add_phase_properties(ps, prefix, prefix_cases, {capability::phases});
  own("prefix_extra_key_isolation",
      "equal tokens under different extra keys (an adapter, a tenant's salt) never share a block: a create finds only "
      "the blocks of its own key's chain (needs extra_keys)",
      {.append = 3, .decode = 1, .create = 2, .reuse = 5, .fork = 1, .release = 2, .keys = true})
      .needs = {capability::extra_keys};
}

namespace {
/// The prefix kind's own boundary events (docs/design.md §4.6), in the order of `event_index`.
enum event_index : std::size_t {
  hit_event,
  revive_event,
  evict_event,
  boundary_event,
  cow_event,
  full_event,
  registered_event,
  hit_prefill_event,
  foreign_key_event,
  before_last_event,
  duplicate_registered_event,
  duplicate_adopted_event,
  second_copy_event,
  leaf_event,
  queue_event,
  lost_event,
  retract_event,
  waiting_abort_event,
  admit_full_event,
  speculation_events
};
bool keyed(const implementation& i) { return i.capabilities.has(capability::extra_keys); }
bool all_but_last(const implementation& i) { return !i.policies.choice("hit_limit").empty(); }
bool registers(const implementation& i) { return i.policies.is("duplicates", "registered"); }
bool adopts(const implementation& i) { return i.policies.is("duplicates", "adopted"); }
bool leaves(const implementation& i) { return i.policies.is("eviction", "leaf"); }
bool queues(const implementation& i) { return i.policies.is("free_order", "one_queue"); }
bool phased(const implementation& i) { return i.capabilities.has(capability::phases); }
constexpr auto events = with_pool_speculation({
    {"prefix hit", "a create finds cached blocks of its tokens", true},
    {"evictable block found again", "a create finds a released block that was still cached", true},
    {"eviction", "an accepted append takes an evictable block (the least recently released)", true},
    block_boundary_event,
    copy_on_write_event,
    {"refused: pool exhausted", "an append refused for capacity alone: free and evictable blocks are too few", true},
    {"rollback into a registered block",
     "an accepted rollback leaves the sequence's last block partly filled while it stays registered", true,
     has_rollback},
    {"prefill after a prefix hit", "an accepted prefill onto a sequence whose rows all came from a create's hit", true,
     prefills},
    {"tokens cached under another key", "a create whose first block's tokens are registered under another extra key",
     true, keyed},
    // One event per policy choice, so that a quick run makes the situation that tells it from the default.
    {"hit stopped before the last token",
     "a create whose hit the policy kept shorter than its registered prefix (hit_limit=all_but_last or "
     "all_but_last_block)",
     true, all_but_last},
    {"duplicate registered", "a block filled under a chain already registered and was registered too", true, registers},
    {"duplicate adopted", "a block filled under a chain already registered and the table took the cached one", true,
     adopts},
    {"duplicate found after the first was evicted",
     "a create found a block registered while its chain had an earlier one, which was evicted since", false, registers},
    {"leaf of several blocks evicted", "an append evicted a leaf run of two or more blocks at once (eviction=leaf)",
     true, leaves},
    {"evicted while free blocks waited",
     "an append evicted a registered block while never-registered blocks waited behind it (free_order=one_queue)", true,
     queues},
    // The phases (docs/kinds/prefix.md "Phases").
    {"hit lost before admit",
     "an admit found a shorter hit than its lookup: another request's allocation evicted it in between", true, phased},
    {"retract between chunks",
     "a retract of a sequence holding rows and blocks an admit took for rows still to be written", true, phased},
    {"abort of a waiting sequence", "an abort of a sequence that was looked up and never admitted", true, phased},
    {"admit refused: pool exhausted", "an admit refused for capacity: free and evictable blocks besides its hit", true,
     phased},
});

/// The pool's events, what creates found and whether an append evicted.
struct probe final : block_pool_probe {
  explicit probe(const cache_config&) : block_pool_probe({boundary_event, cow_event, full_event, speculation_events}) {}
  std::size_t before_evictable = 0;
  std::set<std::int64_t> hit_only;  // sequences holding only what their create found
  void observe(const model& m) override { before_evictable = model_as<prefix_model>(m).evictable_blocks(); }
  void applied(const model& m, const op& o, const expectation& e, event_set& hit) override {
    const auto& pool = model_as<prefix_model>(m);
    policy_events(pool, hit);
    if (o.kind == op_kind::create && pool.size(pool.handles() - 1) > 0) {
      hit.set(hit_event);
      hit_only.insert(pool.handles() - 1);
    }
    if (o.kind == op_kind::create && pool.evictable_blocks() < before_evictable) hit.set(revive_event);
    if (o.kind == op_kind::admit && !e.accepted && e.reasons == refuse_capacity) hit.set(admit_full_event);
    if (!e.accepted || (o.kind != op_kind::append && o.kind != op_kind::prefill && o.kind != op_kind::rollback)) return;
    if (o.kind == op_kind::prefill && hit_only.count(o.seq) && !o.tokens.empty()) hit.set(hit_prefill_event);
    if (o.kind == op_kind::rollback && pool.copies_on_append(o.seq) && !pool.shares_last_block(o.seq))
      hit.set(registered_event);
    if (o.kind != op_kind::rollback || o.count > 0) hit_only.erase(o.seq);
  }
  void appended(const model& m, const op&, const expectation&, event_set& hit) override {
    if (model_as<prefix_model>(m).evictable_blocks() < before_evictable) hit.set(evict_event);
  }
  void policy_events(const prefix_model& pool, event_set& hit) const {
    const auto& f = pool.last();
    const std::pair<bool, std::size_t> facts[] = {
        {f.foreign_key_hit, foreign_key_event},    {f.hit_stopped_before_last, before_last_event},
        {f.duplicate, duplicate_registered_event}, {f.duplicate, duplicate_adopted_event},
        {f.found_second, second_copy_event},       {f.evicted_run, leaf_event},
        {f.evicted_before_free, queue_event},      {f.hit_lost, lost_event},
        {f.retract_mid_prefill, retract_event},    {f.aborted_waiting, waiting_abort_event}};
    for (const auto& [fact, at] : facts)
      if (fact) hit.set(at);  // a duplicate is both; which applies is the implementation's
  }
};
}  // namespace

extern const kind_spec prefix_spec;
/// The kind's row of the kind table (properties/executor/kind_table.h).
extern const kind_descriptor prefix_kind = block_pool_kind<prefix_model>(
    prefix_spec, add_prefix_properties, {prefix_fuzz_config, prefix_fuzz_ops}, {events, make_probe<probe>});

}  // namespace kvconform::kinds
