// The latent kind's properties (what traces each generates; the executor judges every op) and its table row.
#include "oracle/models/latent_model.h"
#include "properties/executor/block_pool_probe.h"
#include "properties/executor/kind_table.h"
#include "properties/generate/statements.h"
#include "properties/kinds/latent/parts.h"
#include "properties/kinds/paged/pool_speculation_properties.h"

namespace kvconform::kinds {

// Rows, value rows, block tables and counts are compared with the model after every op (trace.h, diff), and every
// head's decode with its materialised attention within the bound (docs/numerics.md §3.8); so each property here is
// a choice of traces that drives the cache into the situation it names.
namespace {
namespace summaries {
constexpr const char* values =
    "after every op each sequence's value rows are the first d_c entries of its stored rows, bit for bit: one "
    "storage, one rounding, the rotary part never in a value";
constexpr const char* heads =
    "every query head's output and weights lie within the bound of its materialised attention (the full head's "
    "scale), whichever order the cache multiplies in, for unit, thousand-fold and spiked projections";
constexpr const char* accounting =
    "after every op free + in-use = num_blocks and every block's reference count equals the number of tables holding "
    "it (no leak, no double free)";
constexpr const char* copy_on_write =
    "an append copies a shared last block exactly when it is partly filled; forks read their parent's rows and "
    "decode them as it does";
constexpr const char* reused =
    "a released block handed out again exposes and attends none of its previous sequence's rows (vLLM #37530)";
constexpr const char* rollback =
    "a rollback of a forked sequence leaves every sibling bit-identical, and its own decodes read only the rows kept";
}  // namespace summaries
}  // namespace

void add_latent_properties(std::vector<property>& ps) {
  constexpr cache_kind latent = cache_kind::latent;
  add_statements<paged_mix>(ps, latent, latent_cases, {.stale = 2});
  auto own = [&](const char* name, const char* summary, paged_mix mix) -> property& {
    return add_property(ps, latent, name, summary, latent_cases(mix));
  };
  own("latent_values_are_rows", summaries::values,
      {.append = 6, .fill = 1, .decode = 1, .create = 1, .fork = 2, .release = 1});
  own("latent_decode_heads", summaries::heads, {.append = 3, .fill = 1, .decode = 5, .bad_decode = 1, .fork = 1})
      .needs = {capability::decode};
  own("latent_block_accounting", summaries::accounting,
      {.append = 4, .fill = 2, .overfill = 2, .decode = 0, .create = 2, .fork = 3, .release = 3, .stale = 1})
      .long_traces = true;
  own("latent_copy_on_write", summaries::copy_on_write,
      {.append = 6, .decode = 2, .create = 1, .fork = 4, .release = 1});
  // Few fills: a sequence ending inside its last block is what leaves slots a decode must not read.
  own("latent_reused_blocks", summaries::reused,
      {.append = 4, .fill = 1, .overfill = 1, .decode = 3, .create = 2, .release = 3});
  own("latent_rollback_sibling_intact", summaries::rollback,
      {.append = 2, .decode = 2, .fork = 1, .release = 0, .speculation = {.rollback = 2, .shared_rollback = 6}})
      .needs = {capability::rollback};
  add_pool_speculation_properties(ps, latent, latent_cases);
}

namespace {
/// The latent kind's own events (docs/design.md §4.6), in the order of `event_index`.
enum event_index : std::size_t {
  boundary_event,
  cow_event,
  full_event,
  reused_event,
  large_event,
  deepseek_event,
  speculation_events
};
bool decodes(const implementation& i) { return i.capabilities.has(capability::decode); }
constexpr auto events = with_pool_speculation({
    block_boundary_event,
    copy_on_write_event,
    {"refused: pool exhausted", "an append refused for capacity alone: the pool lacks the blocks", true},
    {"decode after block reuse",
     "a decode once the pool has handed out more blocks than it has: a block held before by another sequence", true,
     decodes},
    {"thousand-fold projections",
     "an accepted decode whose W_uk has a row of norm 500 or more (a thousand-fold projection's rows are of norm about "
     "1000, whatever d_c)",
     true, decodes},
    {"DeepSeek-V3 rows", "a trace over rows of d_c 512 and d_r 64 (a production case of latent_decode_heads)", true,
     decodes, [](const cache_config& c) { return c.d_v == deepseek_latent && c.d_k == c.d_v + deepseek_rotary; }},
});

struct probe final : block_pool_probe {
  explicit probe(const cache_config&) : block_pool_probe({boundary_event, cow_event, full_event, speculation_events}) {}
  void applied(const model& m, const op& o, const expectation& e, event_set& hit) override {
    if (o.kind != op_kind::decode || !e.accepted) return;
    if (model_as<latent_model>(m).blocks_taken() > model_as<latent_model>(m).config().capacity) hit.set(reused_event);
    const std::size_t d_c = o.w_uk.shape.empty() ? 0 : o.w_uk.shape.back();
    for (std::size_t r = 0; d_c > 0 && r < o.w_uk.data.size() / d_c; ++r) {
      double norm = 0;
      for (std::size_t j = 0; j < d_c; ++j) norm += o.w_uk.data[r * d_c + j] * o.w_uk.data[r * d_c + j];
      if (norm >= 500.0 * 500.0) {
        hit.set(large_event);
        return;
      }
    }
  }
  void appended(const model&, const op&, const expectation&, event_set&) override {}
};
}  // namespace

/// The kind's row of the kind table (properties/executor/kind_table.h).
extern const kind_spec latent_spec;
/// No lengthening for the targeted numeric search: its rows are a head's keys, which a latent row reaches only through
/// that head's W_uk (docs/kinds/latent.md, Not yet).
extern const kind_descriptor latent_kind{latent_spec,
                                         model_of<latent_model>,
                                         add_latent_properties,
                                         {latent_fuzz_config, latent_fuzz_ops},
                                         {events, make_probe<probe>}};

}  // namespace kvconform::kinds
