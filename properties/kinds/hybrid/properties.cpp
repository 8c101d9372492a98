// The hybrid kind's properties (what traces each generates; the executor judges every op), its events and table row.
#include "oracle/models/hybrid_model.h"
#include "properties/executor/block_pool_probe.h"
#include "properties/executor/kind_table.h"
#include "properties/generate/statements.h"
#include "properties/kinds/hybrid/parts.h"

namespace kvconform::kinds {

// Every layer's rows, every group's block tables, the counts and the free and per-group block counters are
// compared with the model after every op (trace.h, diff), and every decode with the oracle over the rows its layer
// reads; so each property here is a choice of layouts and ops that drives the cache into the situation it names.
namespace {
namespace summaries {
constexpr const char* accounting =
    "after every op free + the blocks of each group = num_blocks, and every block's reference count equals the "
    "number of tables holding it, whatever the layer types (no leak, no double free)";
constexpr const char* isolation =
    "every layer of every sequence reads exactly its own rows: a write to one layer, group or sequence never changes "
    "another, also after fork";
constexpr const char* window =
    "a sliding group frees a block once its window and sinks no longer read it, and never earlier; full layers keep "
    "every row";
constexpr const char* reuse =
    "a block the sliding group freed and another group took shows only what that group wrote; no layer reads a row "
    "it did not write";
constexpr const char* shared =
    "a shared layer reads its producer's rows bit for bit, through the producer's window, copies and forks, and "
    "writes nothing";
constexpr const char* cross =
    "a cross layer reads the encoder's rows as given at create, however far the decoder's window has slid";
constexpr const char* prefix =
    "with prefix caching, a create holds the blocks live sequences hold for the longest whole-block prefix of its "
    "tokens that the full group has and whose window blocks the sliding group has, and reads their rows";
constexpr const char* prefill =
    "each layer's prefill query reads the rows its type allows at its own row (a sliding layer its sinks and window "
    "there, also where the chunk's last window has passed them) over the rows its cache holds, within the bound; "
    "the sliding group frees the passed blocks only after";
constexpr const char* cow =
    "an append copies a shared, partly filled last block of each group it writes into; tables share exactly what "
    "the model shares";
}  // namespace summaries
}  // namespace

void add_hybrid_properties(std::vector<property>& ps) {
  constexpr cache_kind hybrid = cache_kind::hybrid;
  add_statements<hybrid_mix>(ps, hybrid, hybrid_cases, {.stale = 2}, false);
  auto own = [&](const char* name, const char* summary, hybrid_mix mix) -> property& {
    return add_property(ps, hybrid, name, summary, hybrid_cases(mix));
  };
  own("hybrid_block_accounting", summaries::accounting,
      {.append = 4,
       .fill = 2,
       .overfill = 2,
       .decode = 0,
       .create = 2,
       .fork = 3,
       .release = 3,
       .stale = 1,
       .prefill = 2})
      .long_traces = true;
  own("hybrid_layer_isolation", summaries::isolation, {.append = 6, .decode = 4, .create = 1, .fork = 2});
  own("hybrid_window_frees_blocks", summaries::window,
      {.append = 5, .fill = 2, .overfill = 1, .decode = 3, .fork = 1, .prefill = 2, .needs = need_mixed});
  own("hybrid_prefill_windows", summaries::prefill,
      {.append = 2, .decode = 2, .create = 1, .fork = 1, .prefill = 8, .needs = need_mixed})
      .needs = {capability::prefill};
  own("hybrid_freed_blocks_reused", summaries::reuse,
      {.append = 2,
       .fill = 1,
       .overfill = 1,
       .decode = 1,
       .create = 1,
       .fork = 0,
       .release = 1,
       .slide_away = 12,
       .needs = need_mixed | need_tight});
  own("hybrid_shared_layers_read_producer", summaries::shared,
      {.append = 5, .fill = 1, .decode = 5, .create = 1, .fork = 3, .needs = need_shared | need_mixed});
  own("hybrid_cross_rows_fixed", summaries::cross,
      {.append = 5, .fill = 1, .decode = 4, .create = 1, .fork = 1, .needs = need_cross | need_window});
  own("hybrid_copy_on_write", summaries::cow, {.append = 6, .decode = 2, .create = 1, .fork = 4, .release = 1});
  own("hybrid_prefix_hits", summaries::prefix,
      {.append = 4,
       .fill = 1,
       .decode = 2,
       .create = 3,
       .fork = 1,
       .release = 1,
       .behind_window = 6,
       .needs = need_prefix | need_mixed})
      .needs = {capability::prefix};
}

namespace {
/// The hybrid kind's boundary events (docs/design.md §4.6), in the order of `event_index`.
bool prefixes(const implementation& i) { return i.capabilities.has(capability::prefix); }
bool prefills(const implementation& i) { return i.capabilities.has(capability::prefill); }
enum event_index : std::size_t {
  reused_event,
  straddle_event,
  shared_cow_event,
  one_group_event,
  cross_event,
  boundary_event,
  cow_event,
  full_event,
  hit_event,
  limited_event,
  read_dropped_event,
  held_passed_event,
  refused_freed_event,
  hit_short_event
};
bool next_step(const implementation& i) { return i.policies.is("sliding_free", "next_step"); }
constexpr event events[] = {
    {"sliding block reused by the full group",
     "an accepted append gives the full group a block while every free block was last the sliding group's", true},
    {"window straddling a block boundary",
     "an accepted decode of a sliding layer whose window rows (sinks aside) lie in two or more blocks", true},
    {"shared layer read after copy-on-write",
     "an accepted decode of a shared layer whose producer's group copied a block of that sequence on append", true},
    {"one group exhausts the pool",
     "an append refused for capacity for which one group needed blocks and the other none", true},
    {"cross layer read after the window slid",
     "an accepted decode of the cross layer of a sequence longer than the sliding window", true},
    block_boundary_event,
    copy_on_write_event,
    {"refused: pool exhausted", "an append refused for capacity alone: the pool lacks the blocks", true},
    {"prefix hit", "an accepted create holds blocks of a live sequence's prefix", true, prefixes},
    {"prefix hit limited by one group",
     "an accepted create's hit is shorter than the full or the sliding group alone would give", true, prefixes},
    {"prefill read rows its window then passed",
     "an accepted prefill whose first query read a sliding row outside the window after its last", true, prefills},
    {"passed blocks held until the next step",
     "an accepted append leaves sliding blocks its window has passed in the table (sliding_free=next_step)", true,
     next_step},
    {"refused append freed passed blocks",
     "an append refused for capacity gave back the sliding blocks its first row no longer reads "
     "(refused_append=frees_passed)",
     true, [](const implementation& i) { return i.policies.is("refused_append", "frees_passed"); }},
    {"prefix hit held W - 1 rows",
     "a create's hit left out the block of the window's first row, which the next token no longer reads "
     "(sliding_free=next_step)",
     false, [](const implementation& i) { return next_step(i) && prefixes(i); }},
};

struct probe final : event_probe {
  explicit probe(const cache_config&) {}
  void before(const model& m, const op& o) override {
    const auto& h = model_as<hybrid_model>(m);
    const auto live = h.live();
    size_ = std::binary_search(live.begin(), live.end(), o.seq) ? h.size(o.seq) : 0;
  }
  void after(const model& m, const op& o, const expectation& e, event_set& hit) override {
    const auto& h = model_as<hybrid_model>(m);
    const auto& facts = h.last();
    if (facts.read_then_dropped) hit.set(read_dropped_event);
    if (facts.held_passed) hit.set(held_passed_event);
    if (facts.refused_freed) hit.set(refused_freed_event);
    if (facts.hit_short) hit.set(hit_short_event);
    if (o.kind == op_kind::append || o.kind == op_kind::prefill) {
      if (!e.accepted && e.reasons == refuse_capacity) hit.set(full_event);
      if (facts.one_group_short) hit.set(one_group_event);
      if (facts.full_took_sliding) hit.set(reused_event);
      if (facts.copied[0] || facts.copied[1]) hit.set(cow_event);
      const std::size_t bs = h.config().block_size;
      if (e.accepted && h.size(o.seq) > size_ && size_ / bs != (h.size(o.seq) - 1) / bs) hit.set(boundary_event);
    }
    if (o.kind == op_kind::decode && e.accepted) decoded(h, o, hit);
    if (o.kind == op_kind::create && e.accepted && h.size(h.handles() - 1) > 0) hit.set(hit_event);
    if (facts.hit_limited) hit.set(limited_event);
  }

 private:
  void decoded(const hybrid_model& h, const op& o, event_set& hit) const {
    const cache_config& c = h.config();
    const auto l = static_cast<std::size_t>(o.layer);
    const std::size_t n = h.size(o.seq), src = h.source(l);
    using type = hybrid_model::type;
    if (h.layer_type(src) == type::sliding && n > c.keep) {
      const std::size_t first = std::max(c.keep, n > c.window - c.keep ? n - (c.window - c.keep) : 0);
      if (first / c.block_size != (n - 1) / c.block_size) hit.set(straddle_event);
    }
    if (h.layer_type(l) == type::shared && h.copied(o.seq, h.layer_type(src) == type::sliding ? 1 : 0))
      hit.set(shared_cow_event);
    if (h.layer_type(l) == type::cross && c.window > 0 && n > c.window) hit.set(cross_event);
  }
  std::size_t size_ = 0;
};
}  // namespace

/// The kind's row of the kind table (properties/executor/kind_table.h).
extern const kind_spec hybrid_spec;
extern const kind_descriptor hybrid_kind = {hybrid_spec,
                                            model_of<hybrid_model>,
                                            add_hybrid_properties,
                                            {hybrid_fuzz_config, hybrid_fuzz_ops},
                                            {events, make_probe<probe>},
                                            hybrid_lengthen};

}  // namespace kvconform::kinds
