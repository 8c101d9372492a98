// RapidCheck stateful generation for the prefix kind: tokens from a small vocabulary, prefixes looked up again.
#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "oracle/models/prefix_model.h"
#include "properties/generate/commands.h"
#include "properties/generate/pool_speculation.h"
#include "properties/kinds/prefix/parts.h"
#include "properties/kinds/prefix/phase_generation.h"

namespace kvconform::kinds {

namespace {
using namespace prefix_generation;
using prefix_command = pool_command<prefix_model>;
using choices = pool_choices<prefix_model>;
using row_source_ptr = std::shared_ptr<const row_source>;

rc::Gen<prefix_command> op_gen(const prefix_mix& mix, const prefix_model& m, const gen_context& ctx) {
  // A long case (shapes.h) starts with a sequence and one bulk append of most of the pool.
  if (auto start = long_start(m, ctx)) return *start;
  choices c;
  add_sequence_ops(c, mix, m, ctx.can_decode, ctx.src);
  if (!m.live().empty()) add_appends(c, mix, m.live().size(), m.config().block_size, ctx.src);
  phase_mix phases = mix.phases;
  if (ctx.long_case) phases.step = 0;  // a long case's few ops after its bulk append, as every kind's (shapes.h)
  if (ctx.caps.has(capability::phases)) add_phase_ops(c, phases, m, ctx);
  add_token_speculation(c, mix.speculation, ctx);
  return weighted(std::move(c));
}

/// The most rows of a long case's pool: the model keys each full block by its whole token prefix,
/// so its cost grows with the square of the rows.
constexpr std::size_t long_prefix_rows = 1024;

/// Small pools and blocks, so that the pool runs dry and blocks are evicted within a short trace;
/// a long case's pool holds long_rows_min to long_prefix_rows rows in blocks of 4 to 16 (shapes.h).
config_gens config_gen(bool long_traces, bool deep) {
  const std::size_t max_blocks = deep ? 32 : (long_traces ? 10 : 6), max_block_size = deep ? 8 : 3;
  auto make = [](std::size_t blocks, std::size_t block_size, std::size_t dk, std::size_t dv) {
    cache_config c{cache_kind::prefix, blocks, dk, dv};
    c.block_size = block_size;
    return c;
  };
  return {rc::gen::apply(make, uniform_in<std::size_t>(1, max_blocks + 1),
                         uniform_in<std::size_t>(1, max_block_size + 1), width_gen(deep), width_gen(deep)),
          rc::gen::apply(
              [make](std::size_t rows, std::size_t block_size, std::size_t dk, std::size_t dv) {
                return make(std::min(rows, long_prefix_rows) / block_size, block_size, dk, dv);
              },
              long_rows_gen(), uniform_in<std::size_t>(4, 17), long_width_gen(), long_width_gen())};
}
}  // namespace

/// Ends lru_scenario: released whole blocks queued before a free block, then a block's worth taken.
void queued_free_block(session& s, const cache_config& c, const row_source& src, std::int64_t handle);

void lru_scenario(session& s, const cache_config& c, std::uint64_t seed, std::size_t size) {
  std::mt19937_64 rng(seed);
  const auto classes = all_input_classes();
  const row_source src(classes[seed % classes.size()], c.d_k, c.d_v, seed);
  std::int64_t handle = 0;
  // Cache `size` distinct prefixes (one or two blocks, their first tokens distinct): each created,
  // filled and released, so its blocks are evictable in this order.
  std::vector<std::vector<std::int64_t>> prefixes;
  for (std::size_t i = 0; i < size; ++i) {
    std::vector<std::int64_t> t = {static_cast<std::int64_t>(100 + i)};
    while (t.size() < c.block_size * (1 + rng() % 2)) t.push_back(static_cast<std::int64_t>(rng() % 4));
    prefixes.push_back(t);
  }
  auto run = [&](op o) { return s.step(o); };
  auto create = [&](const std::vector<std::int64_t>& t) { return run(op{.kind = op_kind::create, .tokens = t}); };
  auto release = [&](std::int64_t h) { return run(op{.kind = op_kind::release, .seq = h}); };
  for (const auto& t : prefixes)
    if (!create({}) || !run(token_append(src, handle, {}, t, 0)) || !release(handle++)) return;
  // Reuse some of them, oldest first or not, and release them again: they become the most recent.
  for (std::size_t r = rng() % (size + 1); r > 0; --r)
    if (!create(prefixes[rng() % size]) || !release(handle++)) return;
  // A fresh sequence takes as many rows as the pool holds, evicting the least recently released.
  const std::size_t rows = c.capacity * c.block_size - rng() % (c.block_size * size + 1);
  std::vector<std::int64_t> fresh(rows);
  for (auto& t : fresh) t = 1000 + static_cast<std::int64_t>(rng() % 4);
  if (!create({}) || !run(token_append(src, handle++, {}, fresh, 0))) return;
  // Which prefixes are still found says which blocks went.
  for (const auto& t : prefixes)
    if (!create(t)) return;
  for (std::int64_t h = handle - 1; h < handle + static_cast<std::int64_t>(size); ++h)  // the pool empties
    if (!release(h)) return;
  queued_free_block(s, c, src, handle + static_cast<std::int64_t>(size));
}

void queued_free_block(session& s, const cache_config& c, const row_source& src, std::int64_t handle) {
  // Whole blocks of one sequence, released before another's partly filled one: a block's worth then takes the free
  // block, unless the cache takes the oldest unheld block first (free_order=one_queue) and evicts a cached one.
  const std::size_t bs = c.block_size, first = c.capacity / 2 * bs;
  if (bs < 2 || c.capacity < 2) return;
  std::vector<std::int64_t> cached(first, 2000), tail(c.capacity * bs - first - 1, 3000), probe(bs, 4000);
  auto run = [&](op o) { return s.step(o); };
  auto create = [&](const std::vector<std::int64_t>& t) { return run(op{.kind = op_kind::create, .tokens = t}); };
  auto release = [&](std::int64_t h) { return run(op{.kind = op_kind::release, .seq = h}); };
  const std::int64_t a = handle, b = handle + 1;
  if (!create({}) || !run(token_append(src, a, {}, cached, 0)) || !create({}) ||
      !run(token_append(src, b, {}, tail, 0)) || !release(a) || !release(b) || !create({}) ||
      !run(token_append(src, b + 1, {}, probe, 0)))
    return;
  create(cached);
}

case_generator prefix_cases(prefix_mix mix) {
  return [mix](const property& p, const implementation& impl, const run_options& o) {
    const double trace_scale = mix.trace * (p.long_traces ? 2 : 1);
    return run_commands<prefix_model>(
        p, impl, o, config_gen(p.long_traces, o.deep),
        [](const cache_config& c, const numeric_profile& prof, const policy_set& pol) {
          return prefix_model(c, prof, pol);
        },
        [mix](const prefix_model& m, const gen_context& ctx) { return op_gen(mix, m, ctx); }, trace_scale,
        o.deep ? 0 : quick_max_commands);
  };
}

}  // namespace kvconform::kinds
