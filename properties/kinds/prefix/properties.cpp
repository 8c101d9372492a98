// The prefix kind's properties (hits, rows from the cache, LRU eviction, held blocks, accounting) and its table row.
#include <algorithm>

#include "oracle/models/prefix_model.h"
#include "properties/generate/lengthen.h"
#include "properties/generate/statements.h"
#include "properties/kinds/kind.h"
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

/// Lookups of prefixes held before, among creates, releases and fills that run the pool dry.
constexpr prefix_mix lookups{.append = 4, .fill = 2, .decode = 1, .create = 1, .reuse = 4, .fork = 1, .release = 3};
}  // namespace

void add_prefix_properties(std::vector<property>& ps) {
  add_statements<prefix_mix>(ps, prefix, prefix_cases, {.stale = 2});
  auto own = [&](const char* name, const char* summary, prefix_mix mix) -> property& {
    property& p = add_property(ps, prefix, name, summary);
    p.generate = prefix_cases(mix);
    return p;
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
}

namespace {
/// The prefix kind's own boundary events (docs/design.md §4.6), in the order of `event_index`.
enum event_index : std::size_t { hit_event, revive_event, evict_event, boundary_event, cow_event, full_event };
constexpr event events[] = {
    {"prefix hit", "a create finds cached blocks of its tokens", true},
    {"evictable block found again", "a create finds a released block that was still cached", true},
    {"eviction", "an accepted append takes an evictable block (the least recently released)", true},
    {"block boundary crossed", "an accepted append writes rows into two or more blocks", true},
    {"copy-on-write", "an accepted append to a sequence whose partly filled last block another table holds", true},
    {"refused: pool exhausted", "an append refused for capacity alone: free and evictable blocks are too few", true},
};

/// What the pool and the sequence an append names looked like before the op.
struct probe final : event_probe {
  explicit probe(const cache_config&) {}
  std::size_t before_size = 0, before_evictable = 0;
  bool copies = false;
  void before(const model& m, const op& o) override {
    const auto& pool = model_as<prefix_model>(m);
    const auto live = pool.live();
    const bool known = o.kind == op_kind::append && std::binary_search(live.begin(), live.end(), o.seq);
    before_size = known ? pool.size(o.seq) : 0, copies = known && pool.copies_on_append(o.seq);
    before_evictable = pool.evictable_blocks();
  }
  void after(const model& m, const op& o, const expectation& e, event_set& hit) override {
    const auto& pool = model_as<prefix_model>(m);
    if (o.kind == op_kind::create && pool.size(pool.handles() - 1) > 0) hit.set(hit_event);
    if (o.kind == op_kind::create && pool.evictable_blocks() < before_evictable) hit.set(revive_event);
    if (o.kind != op_kind::append) return;
    if (!e.accepted && e.reasons == refuse_capacity) hit.set(full_event);
    const std::size_t bs = pool.config().block_size, size = e.accepted ? pool.size(o.seq) : before_size;
    if (!e.accepted || size == before_size) return;
    if (pool.evictable_blocks() < before_evictable) hit.set(evict_event);
    if (before_size / bs != (size - 1) / bs) hit.set(boundary_event);
    if (copies) hit.set(cow_event);
  }
};
/// The targeted search's lengthening (kind_descriptor::lengthen): rows appended to the decoded
/// sequence, with tokens of their own so that they extend no prefix another sequence holds.
std::optional<trace> lengthen(const trace& t, const tensor& k, const tensor& v) {
  std::vector<std::int64_t> tokens;
  for (std::size_t r = 0; r < (k.shape.empty() ? 0 : k.shape[0]); ++r)
    tokens.push_back(1000000 + static_cast<std::int64_t>(r));
  return pool_lengthen(t, k, v, &tokens);
}
}  // namespace

extern const kind_spec prefix_spec;
/// The kind's row of the kind table (properties/kinds/kind.h).
extern const kind_descriptor prefix_kind = {prefix_spec,
                                            model_of<prefix_model>,
                                            add_prefix_properties,
                                            {prefix_fuzz_config, prefix_fuzz_ops},
                                            {events, make_probe<probe>},
                                            lengthen};

}  // namespace kvconform::kinds
