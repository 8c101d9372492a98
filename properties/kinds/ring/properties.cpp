// The ring kind's properties (shared statements, window, positions, bulk appends, sliding loop) and its table row.
#include "properties/executor/kind_table.h"
#include "properties/executor/speculation_events.h"
#include "properties/generate/generation.h"
#include "properties/generate/rows_generators.h"
#include "properties/generate/statements.h"

namespace kvconform::kinds {

namespace {
constexpr cache_kind ring = cache_kind::ring;
constexpr auto evict = rows_model::full::evict;

/// A 2-D append of n rows as n single-step 1-D appends.
std::vector<op> bulk_as_singles(const op& o) {
  if (o.kind != op_kind::append || o.k.shape.size() != 2 || o.v.shape.size() != 2 || o.k.shape[0] != o.v.shape[0])
    return {o};
  std::vector<op> singles;
  const std::size_t n = o.k.shape[0], dk = o.k.shape[1], dv = o.v.shape[1];
  for (std::size_t i = 0; i < n; ++i) {
    op s;
    s.k = tensor::vector({o.k.data.begin() + static_cast<std::ptrdiff_t>(i * dk),
                          o.k.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * dk)});
    s.v = tensor::vector({o.v.data.begin() + static_cast<std::ptrdiff_t>(i * dv),
                          o.v.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * dv)});
    singles.push_back(std::move(s));
  }
  return singles;
}

/// Prompt of `size` tokens, then greedy generation: a window of C slides on past C.
void generate_past_window(session& s, const cache_config& c, std::uint64_t seed, std::size_t size) {
  drive_generation(s, c, seed, size, 2 * c.capacity + 3);
}
}  // namespace

void add_ring_properties(std::vector<property>& ps) {
  add_rows_statements(ps, ring, evict);
  auto add = [&](const char* name, const char* summary, rows_mix mix) -> property& {
    return add_property(ps, ring, name, summary, rows_cases(evict, mix));
  };
  add("ring_window_last_steps",
      "the window holds exactly the last min(T, W) steps, oldest first, after 1-D, 2-D, n = 0, n < W, n = W, n > W and "
      "wrap-crossing appends",
      {.append = 4, .fill = 3, .overfill = 3, .empty = 1, .decode = 1})
      .long_traces = true;
  add("ring_positions_total", "positions() and total() agree with the model after any mix of appends",
      {.append = 5, .fill = 2, .overfill = 2, .empty = 1, .decode = 0})
      .long_traces = true;
  add("ring_bulk_equals_singles", "an append of n rows leaves the same state as n single-step appends",
      {.append = 4, .fill = 3, .overfill = 3, .empty = 1, .decode = 1})
      .rewrite = bulk_as_singles;
  auto& wraps = add("ring_decode_after_wraps", "decode stays within the bound for every input class after many wraps",
                    {.append = 3, .fill = 2, .overfill = 3, .decode = 4});
  wraps.needs = {capability::decode};
  wraps.long_traces = true;
  wraps.search = true;

  auto& slides = add_property(ps, ring, "ring_generation_slides",
                              "a generation loop with window C = context length keeps generating past C, attending to "
                              "exactly the last C steps");
  slides.needs = {capability::decode};
  slides.drive = generate_past_window;
  slides.generate = rows_cases(evict, {});  // configs only: the driver makes the ops

  add("ring_sinks_survive",
      "the first keep steps stay, at positions 0 .. keep - 1, through every wrap and every bulk append longer than the "
      "window, and the window holds the last W - keep of the rest",
      {.append = 3, .fill = 4, .overfill = 4, .empty = 1, .decode = 1})
      .needs = {capability::sinks};
  add("ring_empty_append_unchanged",
      "an append of 0 steps changes nothing, also on a full window (with or without sinks)",
      {.append = 2, .fill = 3, .overfill = 1, .empty = 5, .decode = 1});
  add_speculation_properties(ps, ring, evict);
}

/// The kind's row of the kind table (properties/executor/kind_table.h).
extern const kind_spec ring_spec;
namespace {
/// The sizes, then the sinks: keep in [0, W), then the reserve in [0, 8].
void fuzz_config(byte_io& io, cache_config& c) {
  fuzz_sizes(io, c);
  c.keep = io.range(0, c.capacity - 1, c.keep);
  c.reserve = io.range(0, 8, c.reserve);
}

/// The ring kind's own boundary events (docs/design.md §4.6), in the order of `event_index`.
enum event_index : std::size_t {
  exact_fill_event,
  wrap_event,
  bulk_event,
  wrap_point_event,
  sinks_event,
  long_chunk_event,
  at_reserve_event,
  before_full_event,
  speculation_events
};
bool before_full(const implementation& i) { return i.policies.is("rollback", "before_full"); }
constexpr event events[] = {
    {"exact fill", "an accepted append ends with exactly W steps appended: the window has just filled", true},
    {"ring wrap", "an accepted append evicts rows (the window overflows)", true},
    {"bulk append longer than the window", "an accepted append of n > W steps", true},
    {"ends at the wrap point",
     "an append ends where the oldest evictable slot comes round again (T - keep a multiple "
     "of W - keep, T > W)",
     true},
    {"sinks through a wrap", "an accepted append evicts while keep > 0", true,
     [](const implementation& i) { return i.capabilities.has(capability::sinks); }},
    {"chunk longer than the window", "an accepted prefill of m > W steps: its early queries see rows it evicts", true,
     [](const implementation& i) { return i.capabilities.has(capability::prefill); }},
    {"rollback at exactly the reserve",
     "an accepted rollback of reserve > 0 steps from a full window and reserve: the furthest it may go", true,
     [](const implementation& i) { return has_rollback(i) && !before_full(i); }},
    {"rollback refused once full",
     "a rollback of 0 < n <= T steps refused because W steps are held (rollback=before_full)", true,
     [](const implementation& i) { return has_rollback(i) && before_full(i); }},
    rollback_to_empty_event,
    accept_all_event,
    reject_all_event,
};

struct probe final : event_probe {
  explicit probe(const cache_config&) {}
  speculation_probe speculation;
  void after(const model& m, const op& o, const expectation& e, event_set& hit) override {
    const auto& rows = model_as<rows_model>(m);
    const cache_config& c = rows.config();
    speculation.after(o, e, rows.size(), hit, speculation_events);
    if (o.kind == op_kind::rollback && e.accepted && c.reserve > 0 && o.count == static_cast<std::int64_t>(c.reserve) &&
        rows.size() == c.capacity)  // it held W + reserve rows
      hit.set(at_reserve_event);
    if (o.kind == op_kind::rollback && !e.accepted && o.count > 0 && o.count <= rows.total() &&
        rows.total() >= static_cast<std::int64_t>(c.capacity))
      hit.set(before_full_event);
    if (o.kind == op_kind::prefill && e.accepted && e.problems.size() > c.capacity) hit.set(long_chunk_event);
    if ((o.kind != op_kind::append && o.kind != op_kind::prefill) || !e.accepted) return;
    const std::size_t n = append_steps(o, c.d_k, c.d_v).value_or(0), total = static_cast<std::size_t>(rows.total());
    const std::size_t held = c.capacity + c.reserve;  // the rows a window with a reserve holds before it evicts
    if (n == 0) return;
    if (total == c.capacity) hit.set(exact_fill_event);
    if (total > held) hit.set(wrap_event);
    if (total > held && c.keep > 0) hit.set(sinks_event);
    if (n > c.capacity) hit.set(bulk_event);
    if (total > held && (total - c.keep) % (held - c.keep) == 0) hit.set(wrap_point_event);
  }
};
}  // namespace

extern const kind_descriptor ring_kind =
    rows_kind<rows_model::full::evict>(ring_spec, add_ring_properties, {events, make_probe<probe>}, fuzz_config);

}  // namespace kvconform::kinds
