// The beam kind's properties (rollback, reorder, GQA, masks, generation loops; prefill in prefill.cpp) and its row.
#include <random>

#include "oracle/models/beam_model.h"
#include "properties/executor/kind_table.h"
#include "properties/generate/statements.h"
#include "properties/kinds/beam/generation.h"
#include "properties/kinds/beam/inputs.h"
#include "properties/kinds/beam/parts.h"

namespace kvconform::kinds {

namespace {

/// An update of n > 1 steps as n single-step updates at start, start + 1, ...: a prefill must
/// leave the state n decode steps leave. (Generators for it never overfill: a refused bulk
/// update would otherwise differ from its accepted first steps.)
std::vector<op> update_as_steps(const op& o) {
  if (o.kind != op_kind::update || o.k.shape.size() != 4 || o.k.shape != o.v.shape || o.k.shape[2] < 2) return {o};
  const std::size_t rows = o.k.shape[0] * o.k.shape[1], n = o.k.shape[2], d = o.k.shape[3];
  std::vector<op> steps;
  for (std::size_t t = 0; t < n; ++t) {
    op s = o;
    s.start = o.start + static_cast<std::int64_t>(t);
    s.k.shape[2] = s.v.shape[2] = 1;
    s.k.data.clear(), s.v.data.clear();
    for (std::size_t r = 0; r < rows; ++r) {
      const auto at = static_cast<std::ptrdiff_t>((r * n + t) * d), end = at + static_cast<std::ptrdiff_t>(d);
      s.k.data.insert(s.k.data.end(), o.k.data.begin() + at, o.k.data.begin() + end);
      s.v.data.insert(s.v.data.end(), o.v.data.begin() + at, o.v.data.begin() + end);
    }
    steps.push_back(std::move(s));
  }
  return steps;
}

/// Every row's real rows (0 of them makes a fully masked row) decoded twice in every layer: behind
/// `size` positions of left padding, then rolled back and behind max_len. The oracle's exact
/// result ignores masked positions, so both decodes are judged against the one unpadded answer
/// within the bound, and padding must take exactly zero weight.
void decode_with_more_padding(session& s, const cache_config& c, std::uint64_t seed, std::size_t size) {
  const auto classes = all_input_classes();
  const row_source src(classes[seed % classes.size()], c.d_k, c.d_v, seed);
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> real(c.batch);
  for (std::size_t& r : real) r = rng() % (size + 1);
  const tensor q = beam_query(src, c.batch, c.q_heads);
  for (const std::size_t len : {size, c.capacity}) {
    std::vector<std::size_t> pads;
    for (std::size_t r : real) pads.push_back(len - r);
    for (std::size_t l = 0; l < c.layers; ++l) {
      op u{.kind = op_kind::update, .layer = static_cast<std::int64_t>(l), .start = 0};
      for (std::size_t b = 0; b < c.batch; ++b)
        for (std::size_t h = 0; h < c.heads; ++h) {
          const std::uint64_t lane = seed + (l * c.batch + b) * c.heads + h;
          src.rows(0, pads[b], ~lane ^ len, u.k.data, u.v.data);  // padding: any rows, different each time
          src.rows(0, real[b], lane, u.k.data, u.v.data);         // the real rows, the same each time
        }
      u.k.shape = u.v.shape = {c.batch, c.heads, len, c.d_k};
      const op d{
          .kind = op_kind::decode, .q = q, .layer = static_cast<std::int64_t>(l), .mask = left_padding_mask(pads, len)};
      if (!s.step(u) || !s.step(d)) return;
    }
  }
}

/// Greedy generation from left-padded prompts of `size` positions until the cache is full.
void greedy_generation(session& s, const cache_config& c, std::uint64_t seed, std::size_t size) {
  compare_with_recompute(s, c, seed, size, c.capacity - size, search_mode::greedy);
}

/// Beam search of width B from one prompt of `size` positions until the cache is full.
void beam_search(session& s, const cache_config& c, std::uint64_t seed, std::size_t size) {
  compare_with_recompute(s, c, seed, size, c.capacity - size, search_mode::beam);
}

constexpr cache_kind beam = cache_kind::beam;

namespace summaries {
constexpr const char* state =
    "every layer x row x kv head equals the model after any mix of prefills (updates of several positions and prefill "
    "ops), decode steps, rollbacks, reorders and refusals";
constexpr const char* prefill =
    "an update of n steps leaves the state of n single-step updates (a prefill equals n decode steps)";
constexpr const char* rollback =
    "an update starting below the length truncates first: the length becomes start + n and the rolled-back positions "
    "are gone (speculative decoding)";
constexpr const char* layers =
    "each layer keeps its own length and rows: updates, rollbacks and refusals on one layer change no other";
constexpr const char* gather =
    "reorder equals a gather of the model in every layer (repeats, drops, permutations, identity), and later updates "
    "to a repeated row never reach its twin";
constexpr const char* mask =
    "left padding takes exactly zero weight, a fully masked row gives zeros, and more left padding leaves every row's "
    "output within the bound of the unpadded result";
constexpr const char* gqa =
    "query head h reads kv head h / (Hq / H), for H = Hq, H = 1 and grouped heads, within the bound";
constexpr const char* memory =
    "bytes = 2 L B H T D sizeof(scalar), bytes per token = 2 L H D sizeof(scalar), and the largest B x T within a 1 "
    "MiB budget";
constexpr const char* greedy =
    "greedy generation of left-padded prompts through the cache equals recomputing every pass from scratch bit for bit "
    "(tokens and logits), with P + N K/V computations against the sum of the prefix lengths";
constexpr const char* search =
    "beam search of width B through reorder equals a beam search that recomputes every beam from scratch, bit for bit";
}  // namespace summaries

/// Every op beam has, refusals included (prefills where the implementation has them).
constexpr beam_mix every_op{.append = 4,
                            .fill = 1,
                            .overfill = 1,
                            .bad_shape = 1,
                            .decode = 2,
                            .bad_decode = 1,
                            .rollback = 2,
                            .reorder = 2,
                            .bad_reorder = 1,
                            .prefill = 2,
                            .bad_prefill = 1};

/// Beam's own properties, in the gate's order; three are drivers (masks, and generation loops
/// compared with a recompute).
void add_own(std::vector<property>& ps) {
  auto add = [&](const char* name, const char* summary, beam_mix mix) -> property& {
    return add_property(ps, beam, name, summary, beam_cases(mix));
  };
  using driver = void (*)(session&, const cache_config&, std::uint64_t, std::size_t);
  auto drive = [&](const char* name, const char* summary, driver d) {
    property& p = add_property(ps, beam, name, summary);
    p.needs = {capability::decode};
    p.drive = d;
    p.generate = beam_cases({});  // configs only: the driver makes the ops
  };
  add("beam_state_matches_model", summaries::state, every_op);
  add("beam_prefill_equals_steps", summaries::prefill,
      {.append = 4, .fill = 2, .decode = 1, .rollback = 2, .reorder = 1})
      .rewrite = update_as_steps;
  add("beam_rollback_truncates", summaries::rollback, {.append = 3, .fill = 1, .decode = 1, .rollback = 4});
  add("beam_layers_independent", summaries::layers,
      {.append = 4, .overfill = 1, .bad_shape = 1, .decode = 1, .rollback = 3});
  add("beam_reorder_gathers", summaries::gather, {.append = 3, .fill = 1, .decode = 1, .rollback = 1, .reorder = 4});
  drive("beam_mask_left_padding", summaries::mask, decode_with_more_padding);
  auto& gqa = add("beam_gqa_heads", summaries::gqa, {.append = 3, .fill = 1, .decode = 5, .rollback = 1, .reorder = 1});
  gqa.needs = {capability::decode};
  gqa.search = true;
  add("beam_memory_formulas", summaries::memory, {.append = 1, .empty = 0, .decode = 0});
  drive("beam_generation_equals_recompute", summaries::greedy, greedy_generation);
  drive("beam_search_equals_recompute", summaries::search, beam_search);
}
}  // namespace

void add_beam_properties(std::vector<property>& ps) {
  // No one_d_equals_one_row: beam's update has no 1-D form.
  add_statements<beam_mix>(ps, beam, beam_cases, {.bad_reorder = 3, .bad_prefill = 2}, false);
  add_own(ps);
  add_prefill_properties(ps);
}

/// The kind's row of the kind table (properties/executor/kind_table.h).
extern const kind_spec beam_spec;
extern const kind_descriptor beam_kind = {beam_spec,           model_of<beam_model>,
                                          add_beam_properties, {beam_fuzz_config, beam_fuzz_ops},
                                          beam_coverage(),     beam_lengthen};

}  // namespace kvconform::kinds
