// The recurrent kind's properties (accepted steps only, draft rounds, resumed prefixes, checkpoints), its events and
// row.
#include "oracle/models/recurrent_model.h"
#include "properties/executor/kind_table.h"
#include "properties/generate/statements.h"
#include "properties/kinds/recurrent/parts.h"

namespace kvconform::kinds {

namespace {
constexpr cache_kind recurrent = cache_kind::recurrent;

/// A property of the kind's own: its name, what it proves, its op mix, what it needs, whether it draws long traces.
struct own_property {
  const char* name;
  const char* summary;
  recurrent_mix mix;
  capability_set needs = {};
  bool long_traces = false;
};
const own_property own_properties[] = {
    {"recurrent_state_within_bound",
     "every step's output and every sequence's state lie within the derived bound of the oracle's recurrence over its "
     "accepted steps (docs/numerics.md §3.9), whatever the chunking, and the window holds its last raw rows exactly",
     {.reuse = 1, .append = 5, .cross = 3, .speculate = 0, .rollback = 0, .evict = 0, .long_appends = true},
     {},
     true},
    {"recurrent_rollback_restores",
     "a rollback of drafts leaves the state, window and length of the accepted steps alone, and the next step (a "
     "zero-draft step included) continues from the accepted state",
     {.reuse = 1, .append = 2, .cross = 1, .speculate = 6, .rollback = 2},
     {capability::rollback}},
    {"recurrent_checkpoint_after_accept",
     "a checkpoint is published only once its steps are kept for good (the sequence's next append or its release), "
     "at the declared block boundaries, holding the state at its boundary",
     {.reuse = 2, .append = 2, .cross = 3, .speculate = 4, .rollback = 1, .release = 2},
     {capability::rollback}},
    {"recurrent_hit_resumes_as_miss",
     "a create resumes from the checkpoint of its longest held prefix (within the declared hit limit) and continues "
     "exactly as the sequence that computed it would have, within the bound",
     {.create = 1, .reuse = 4, .append = 1, .cross = 3, .speculate = 0, .release = 3, .evict = 1, .round_trip = 4}},
    {"recurrent_fork_isolated",
     "a fork starts with its source's state, window, length and droppable steps, and neither changes the other "
     "afterwards",
     {.create = 2, .reuse = 1, .append = 3, .cross = 1, .speculate = 2, .rollback = 1, .fork = 4, .release = 1}},
    {"recurrent_checkpoint_accounting",
     "the cache holds at most its capacity of checkpoints, one per chain (the first stays), evicts the least recently "
     "used (published or resumed from) first, and counts its hits",
     {.create = 1, .reuse = 4, .append = 2, .cross = 4, .speculate = 1, .release = 3, .evict = 3, .round_trip = 2},
     {},
     true},
    {"recurrent_groups_agree",
     "with attention layers beside the recurrent one in one pool, a create resumes from the longest prefix whose "
     "checkpoint and every attention block below it are held (the shortest over the groups), and every op leaves the "
     "state and each layer's rows at the same accepted length",
     {.create = 1,
      .reuse = 4,
      .append = 2,
      .cross = 3,
      .speculate = 3,
      .rollback = 1,
      .release = 2,
      .evict = 2,
      .round_trip = 2,
      .short_of_state = 2,
      .attention = true}},
};
}  // namespace

void add_recurrent_properties(std::vector<property>& ps) {
  add_property(ps, recurrent, statements::refused_unchanged).generate =
      recurrent_cases({.reuse = 1, .append = 3, .cross = 1, .speculate = 2, .rollback = 1, .bad = 5});
  add_property(ps, recurrent, statements::copy_semantics).generate =
      recurrent_cases({.append = 5, .cross = 2, .speculate = 2, .fork = 1});
  for (const own_property& p : own_properties)
    add_property(ps, recurrent, p.name, p.summary, recurrent_cases(p.mix), p.needs).long_traces = p.long_traces;
}

namespace {
/// The kind's own events (docs/design.md §4.6), in the order of `event_index`.
enum event_index : std::size_t {
  hit_event,
  published_event,
  evicted_event,
  dropped_boundary_event,
  zero_draft_event,
  crossed_event,
  delta_event,
  window_event,
  short_of_state_event,
  short_of_blocks_event,
};
constexpr event events[] = {
    {"prefix hit", "a create resumed from a checkpoint", true},
    {"checkpoint published", "a sequence's steps kept for good published a checkpoint", true},
    {"checkpoint evicted", "an evict or the room a publication needed dropped a checkpoint", true},
    {"rollback past a boundary", "a rollback dropped steps past a block boundary its append had crossed", true},
    {"step after a rollback", "an append right after a rollback of the same sequence (a zero-draft step)", true},
    {"append across a boundary", "an append of several steps crossed a block boundary", true},
    {"delta rule", "the config's recurrence is the gated delta rule", true, nullptr,
     [](const cache_config& c) { return c.delta; }},
    {"convolution window", "a convolution of width 3 or more: rows carried across appends", true, nullptr,
     [](const cache_config& c) { return c.conv_width >= 3; }},
    {"hit short of the state", "a create's hit stopped below a prefix the attention blocks covered: no checkpoint",
     true},
    {"hit short of the blocks", "a create's hit stopped below a checkpoint: an attention block was missing", true},
};

struct probe final : event_probe {
  explicit probe(const cache_config&) {}
  void after(const model& m, const op&, const expectation& e, event_set& hit) override {
    if (!e.accepted) return;
    const auto& f = model_as<recurrent_model>(m).last();
    const std::pair<bool, std::size_t> facts[] = {{f.hit > 0, hit_event},
                                                  {f.published, published_event},
                                                  {f.evicted, evicted_event},
                                                  {f.dropped_pending, dropped_boundary_event},
                                                  {f.after_rollback, zero_draft_event},
                                                  {f.crossed, crossed_event},
                                                  {f.short_of_state, short_of_state_event},
                                                  {f.short_of_blocks, short_of_blocks_event}};
    for (const auto& [fact, at] : facts)
      if (fact) hit.set(at);
  }
};
}  // namespace

extern const kind_spec recurrent_spec;
/// The kind's row of the kind table (properties/executor/kind_table.h).
extern const kind_descriptor recurrent_kind = {recurrent_spec,
                                               model_of<recurrent_model>,
                                               add_recurrent_properties,
                                               {recurrent_fuzz_config, recurrent_fuzz_ops},
                                               {events, make_probe<probe>}};

}  // namespace kvconform::kinds
