// The properties of the kinds that append rows (flat, ring, paged per sequence); those that hold for several run on each, some on beam too.
#include "properties/generate/generation.h"
#include "properties/generate/property.h"

namespace kvconform {

namespace {
constexpr cache_kind rows_kinds[] = {cache_kind::flat, cache_kind::ring, cache_kind::paged};
// Statements that hold for the beam kind as well: its update at the length is the append, per layer.
constexpr cache_kind with_beam[] = {cache_kind::flat, cache_kind::ring, cache_kind::paged, cache_kind::beam};

/// A 1-D append as the equivalent one-row 2-D append.
std::vector<op> one_d_as_one_row(const op& o) {
  op r = o;
  if (o.kind == op_kind::append && o.k.shape.size() == 1 && o.v.shape.size() == 1) {
    r.k.shape = {1, o.k.shape[0]};
    r.v.shape = {1, o.v.shape[0]};
  }
  return {r};
}

/// A 2-D append of n rows as n single-step 1-D appends.
std::vector<op> bulk_as_singles(const op& o) {
  if (o.kind != op_kind::append || o.k.shape.size() != 2 || o.v.shape.size() != 2 || o.k.shape[0] != o.v.shape[0]) return {o};
  std::vector<op> singles;
  const std::size_t n = o.k.shape[0], dk = o.k.shape[1], dv = o.v.shape[1];
  for (std::size_t i = 0; i < n; ++i) {
    op s;
    s.k = tensor::vector({o.k.data.begin() + static_cast<std::ptrdiff_t>(i * dk), o.k.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * dk)});
    s.v = tensor::vector({o.v.data.begin() + static_cast<std::ptrdiff_t>(i * dv), o.v.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * dv)});
    singles.push_back(std::move(s));
  }
  return singles;
}

/// Prompt of `size` tokens, then greedy generation: a ring of window C slides on past C.
void generate_past_window(session& s, const cache_config& c, std::uint64_t seed, std::size_t size) {
  drive_generation(s, c, seed, size, 2 * c.capacity + 3);
}

/// Prompt of `size` tokens, then greedy generation until the flat cache refuses: the model
/// accepts exactly C - P new tokens, so a cache that stops one short (or never) diverges.
void generate_to_capacity(session& s, const cache_config& c, std::uint64_t seed, std::size_t size) {
  drive_generation(s, c, seed, size, c.capacity + 2);
}

/// The seed's worked example, with its numbers exactly as the seed states them.
trace seed_worked_example() {
  trace t;
  t.config = {cache_kind::flat, 4, 2, 2};
  t.property = "seed_worked_example";
  const op a1{.kind = op_kind::append, .k = tensor::matrix(2, 2, {1, 0, 0, 1}), .v = tensor::matrix(2, 2, {1, 2, 3, 4})};
  const op a2{.kind = op_kind::append, .k = tensor::vector({1, 1}), .v = tensor::vector({5, 6})};
  const op d{.kind = op_kind::decode, .q = tensor::vector({1, 0}), .expect = pinned{true, 3, {3, 4}, {0.40111209, 0.19777581, 0.40111209}, 8}};
  const op full{.kind = op_kind::append, .k = tensor::matrix(2, 2, {1, 2, 3, 4}), .v = tensor::matrix(2, 2, {1, 2, 3, 4}), .expect = pinned{false, 3, {}, {}, 8}};
  t.ops = {a1, a2, d, full};
  return t;
}

}  // namespace

void add_rows_properties(std::vector<property>& ps) {
  auto add = [&](std::string name, std::string summary, std::span<const cache_kind> kinds) -> property& {
    return add_property(ps, std::move(name), std::move(summary), kinds);
  };
  constexpr cache_kind flat_only[] = {cache_kind::flat};

  auto& fill = add("exact_fill", "appends that end exactly at capacity are accepted; one more step is refused", flat_only);
  fill.mix = {.append = 3, .fill = 4, .overfill = 3, .empty = 1, .decode = 1};

  auto& refused = add("refused_append_unchanged", "a refused op (full, step mismatch, wrong width or rank, unknown or released sequence, bad layer, start or reorder index) changes nothing", with_beam);
  refused.mix = {.append = 3, .fill = 2, .overfill = 3, .empty = 1, .bad_shape = 4, .decode = 1, .bad_decode = 2, .bad_reorder = 3, .stale = 2};

  auto& copies = add("copy_semantics", "the cache keeps copies: later changes to the caller's arrays change nothing, and no call modifies its inputs", with_beam);
  copies.mix = {.append = 6, .fill = 1, .empty = 1, .decode = 3};

  auto& views = add("views_filled_rows", "keys()/values() show exactly the filled rows (of each layer, for beam) and decode weighs exactly that many", with_beam);
  views.mix = {.append = 5, .fill = 1, .empty = 2, .decode = 4};

  auto& one_row = add("one_d_equals_one_row", "a 1-D append leaves the same state as the one-row 2-D append", rows_kinds);
  one_row.mix = {.append = 6, .fill = 1, .empty = 1, .decode = 1};
  one_row.rewrite = one_d_as_one_row;

  auto& order = add("order_preserved", "rows keep their append order across many appends", with_beam);
  order.mix = {.append = 8, .fill = 1, .empty = 1, .decode = 1};
  order.long_traces = true;

  auto& large = add("large_scores", "scores beyond +-1000 and +-1e4 give finite output within the bound", with_beam);
  large.needs = {"decode"};
  large.mix = {.append = 4, .fill = 1, .decode = 4};
  large.classes = large_score_classes();

  auto& bound = add("decode_within_bound", "decode output and weights lie within the derived bound for every input class", with_beam);
  bound.needs = {"decode"};
  bound.mix = {.append = 4, .fill = 1, .empty = 1, .decode = 4, .bad_decode = 1};

  auto& gen_flat = add("generation_fills_capacity", "a generation loop with capacity C = context length appends exactly C - P tokens, then is refused", flat_only);
  gen_flat.needs = {"decode"};
  gen_flat.drive = generate_to_capacity;

  constexpr cache_kind ring_only[] = {cache_kind::ring};
  auto& window = add("ring_window_last_steps", "the window holds exactly the last min(T, W) steps, oldest first, after 1-D, 2-D, n = 0, n < W, n = W, n > W and wrap-crossing appends", ring_only);
  window.mix = {.append = 4, .fill = 3, .overfill = 3, .empty = 1, .decode = 1};
  window.long_traces = true;

  auto& positions = add("ring_positions_total", "positions() and total() agree with the model after any mix of appends", ring_only);
  positions.mix = {.append = 5, .fill = 2, .overfill = 2, .empty = 1, .decode = 0};
  positions.long_traces = true;

  auto& bulk = add("ring_bulk_equals_singles", "an append of n rows leaves the same state as n single-step appends", ring_only);
  bulk.mix = {.append = 4, .fill = 3, .overfill = 3, .empty = 1, .decode = 1};
  bulk.rewrite = bulk_as_singles;

  auto& wraps = add("ring_decode_after_wraps", "decode stays within the bound for every input class after many wraps", ring_only);
  wraps.needs = {"decode"};
  wraps.mix = {.append = 3, .fill = 2, .overfill = 3, .decode = 4};
  wraps.long_traces = true;

  auto& gen_ring = add("ring_generation_slides", "a generation loop with window C = context length keeps generating past C, attending to exactly the last C steps", ring_only);
  gen_ring.needs = {"decode"};
  gen_ring.drive = generate_past_window;

  auto& seed = add("seed_worked_example", "the seed's worked example: output [3, 4], weights [0.40111209, 0.19777581, 0.40111209], then a refused append", flat_only);
  seed.needs = {"decode"};
  seed.fixed = seed_worked_example;
}


}  // namespace kvconform
