// Production shapes and long cases reach every kind as docs/design.md §4.4 says: how many, where, and how they start.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "properties/executor/kind_table.h"
#include "properties/generate/numbers_property.h"
#include "properties/generate/run_property.h"
#include "properties/runners/builtin.h"

namespace kv = kvconform;

namespace {
// What production and long cases reach (properties/generate/shapes.h, which needs RapidCheck's headers).
constexpr std::size_t production_dims[] = {32, 64, 80, 96, 128, 256};
constexpr std::size_t huge_pool_blocks = std::size_t{1} << 16, big_beam_elements = std::size_t{1} << 24;

/// Every trace a property's run generated on `impl`, in order (each passes on a reference); `stats`, if
/// given, gets the run's decode statistics.
std::vector<kv::trace> traces_of(const std::string& impl, const kv::property& p, kv::run_options o = {},
                                 kv::decode_stats* stats = nullptr) {
  const kv::implementation* i = kv::find_implementation(impl);
  EXPECT_NE(i, nullptr) << impl;
  std::vector<kv::trace> seen;
  o.on_trace = [&seen](const kv::trace& t) { seen.push_back(t); };
  const kv::property_run r = kv::run_property(p, *i, o);
  EXPECT_TRUE(r.error.empty() && !r.fail)
      << impl << " " << p.name << ": " << r.error << (r.fail ? r.fail->message : "");
  if (stats) stats->merge(r.stats);
  return seen;
}
std::vector<kv::trace> traces_of(const std::string& impl, const std::string& property, kv::run_options o = {}) {
  const kv::implementation* i = kv::find_implementation(impl);
  const kv::property* p = i ? kv::find_property(property, i->kind) : nullptr;
  if (!p) ADD_FAILURE() << impl << " has no property " << property;
  return p ? traces_of(impl, *p, o) : std::vector<kv::trace>{};
}
/// The indices of the traces `is` holds for.
std::vector<std::size_t> where(const std::vector<kv::trace>& ts, const std::function<bool(const kv::trace&)>& is) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < ts.size(); ++i)
    if (is(ts[i])) at.push_back(i);
  return at;
}
/// Rows the config holds: its capacity, times the block size for pools (the "long cache" event's measure).
std::size_t rows_of(const kv::cache_config& c) { return c.capacity * std::max<std::size_t>(1, c.block_size); }
bool is_long(const kv::trace& t) { return rows_of(t.config) > 256; }
bool is_wide(const kv::trace& t) { return t.config.d_k >= 32 && !is_long(t); }
/// Steps of an append: its rows (2-D), one (1-D), or a hybrid append's second dimension (writing layers, n, d).
std::size_t steps(const kv::op& o) {
  return o.k.shape.size() == 2 ? o.k.shape[0] : o.k.shape.size() == 3 ? o.k.shape[1] : 1;
}

/// How a long case of each kind starts and what its config is (the table of docs/design.md §4.4).
void expect_rows_start(const kv::trace& t) {  // flat, ring, growing
  const kv::cache_config& c = t.config;
  EXPECT_TRUE(c.capacity >= 300 && c.capacity <= 4096) << c.capacity;
  EXPECT_TRUE(c.d_k <= 4 && c.d_v <= 4 && c.keep <= 4);
  ASSERT_EQ(t.ops[0].kind, kv::op_kind::append);
  EXPECT_GE(steps(t.ops[0]) * 8, c.capacity * 7);  // at least 7/8 of the room: past 256 rows
  EXPECT_LE(steps(t.ops[0]), c.capacity);
}
void expect_pool_start(const kv::trace& t, std::size_t most_rows, std::size_t min_block) {  // paged, prefix
  const kv::cache_config& c = t.config;
  EXPECT_TRUE(rows_of(c) >= 300 - c.block_size && rows_of(c) <= most_rows) << rows_of(c);
  EXPECT_TRUE(c.block_size >= min_block && c.block_size <= 16 && c.d_k <= 4 && c.d_v <= 4);
  ASSERT_EQ(t.ops[0].kind, kv::op_kind::create);
  ASSERT_EQ(t.ops[1].kind, kv::op_kind::append);
  EXPECT_GE(steps(t.ops[1]) * 8, rows_of(c) * 7);
}
void expect_hybrid_start(const kv::trace& t) {
  const kv::cache_config& c = t.config;
  EXPECT_TRUE(rows_of(c) >= 300 - c.block_size && rows_of(c) <= 4096) << rows_of(c);
  EXPECT_TRUE(c.block_size <= 16 && c.d_k <= 4 && c.d_v <= 4 && c.layers <= 3 && c.window * 4 <= rows_of(c));
  ASSERT_EQ(t.ops[0].kind, kv::op_kind::create);
  ASSERT_EQ(t.ops[1].kind, kv::op_kind::append);
  // The room left by the sliding group's window and the encoder's blocks, at least half the pool.
  EXPECT_GE(steps(t.ops[1]) * 2, rows_of(c));
}
// One sequence's steps in one append, into a pool of a few checkpoints (and blocks).
void expect_recurrent_start(const kv::trace& t) {
  const kv::cache_config& c = t.config;
  EXPECT_TRUE(c.capacity >= 17 && c.capacity <= 32) << c.capacity;
  EXPECT_TRUE(c.block_size >= 16 && c.block_size <= 64 && c.d_k <= 4 && c.d_v <= 4);
  ASSERT_EQ(t.ops[0].kind, kv::op_kind::create);
  ASSERT_EQ(t.ops[1].kind, kv::op_kind::append);
  ASSERT_EQ(t.ops[1].x.shape.size(), 2u);
  EXPECT_TRUE(t.ops[1].x.shape[0] >= 300 && t.ops[1].x.shape[0] <= 4096) << t.ops[1].x.shape[0];
}
void expect_huge_pool_start(const kv::trace& t) {  // paged_block_accounting
  const kv::cache_config& c = t.config;
  EXPECT_TRUE(c.capacity > huge_pool_blocks && c.capacity <= huge_pool_blocks + 64 && c.block_size == 1);
  EXPECT_TRUE(c.d_k == 1 && c.d_v == 1);
  ASSERT_EQ(t.ops[1].kind, kv::op_kind::append);
  EXPECT_GT(steps(t.ops[1]), huge_pool_blocks);  // whatever order the blocks come in, one past 2^16 is taken
}
void expect_beam_start(const kv::trace& t) {
  const kv::cache_config& c = t.config;
  EXPECT_TRUE(c.layers >= 4 && c.layers <= 8 && c.batch <= 2 && c.heads <= 4);
  EXPECT_TRUE(std::count(std::begin(production_dims), std::end(production_dims), c.d_k)) << c.d_k;
  EXPECT_GT((c.layers - 1) * c.batch * c.heads * c.capacity * c.d_k, big_beam_elements);  // the last layer alone
  ASSERT_EQ(t.ops[0].kind, kv::op_kind::update);
  EXPECT_EQ(t.ops[0].layer, static_cast<std::int64_t>(c.layers - 1));
  EXPECT_EQ(t.ops[0].start, 0);
  for (const kv::op& o : t.ops) {  // a few positions per write: no fill of 2^24 / L elements
    if (o.kind == kv::op_kind::update) {
      EXPECT_LE(o.k.shape[2], 4u);
    }
  }
}
void expect_long_start(const kv::trace& t, const std::string& property) {
  ASSERT_GE(t.ops.size(), 3u);
  // A command with a rollback is a group of up to four ops (a speculative round: prefill, two rollbacks, the
  // bonus append; a pool's rollback into a block: append, fork, rollback, append), one with a create of tokens of
  // up to five (a recurrent round trip: create, append, release, create with its tokens, append).
  const bool groups = std::any_of(t.ops.begin(), t.ops.end(), [](const kv::op& o) {
    return o.kind == kv::op_kind::rollback || (o.kind == kv::op_kind::create && !o.tokens.empty());
  });
  EXPECT_LE(t.ops.size(), groups ? 45u : 9u) << property;
  const std::map<kv::cache_kind, std::function<void()>> by_kind = {
      {kv::cache_kind::flat, [&] { expect_rows_start(t); }},
      {kv::cache_kind::ring, [&] { expect_rows_start(t); }},
      {kv::cache_kind::growing, [&] { expect_rows_start(t); }},
      {kv::cache_kind::paged,
       [&] { property == "paged_block_accounting" ? expect_huge_pool_start(t) : expect_pool_start(t, 4096, 1); }},
      {kv::cache_kind::prefix, [&] { expect_pool_start(t, 1024, 4); }},
      {kv::cache_kind::beam, [&] { expect_beam_start(t); }},
      {kv::cache_kind::hybrid, [&] { expect_hybrid_start(t); }},
      {kv::cache_kind::latent, [&] { expect_pool_start(t, 4096, 1); }},
      {kv::cache_kind::tiered, [&] { expect_pool_start(t, 512, 4); }},
      {kv::cache_kind::recurrent, [&] { expect_recurrent_start(t); }},
      {kv::cache_kind::radix, [&] { expect_pool_start(t, 1024, 4); }}};
  ASSERT_TRUE(by_kind.count(t.config.kind)) << "a kind without expectations: add its row";
  by_kind.at(t.config.kind)();
}
}  // namespace

// Every generated property of every kind's reference has one long case in a quick run, among its first seven
// cases, unless it is a driver or metamorphic; each starts as its kind's row of the table says.
TEST(Shapes, EveryKindsQuickRunHasOneLongCaseEarly) {
  std::vector<std::pair<std::string, const kv::property*>> sampled;  // runs whose long case had unjudged decodes
  for (const kv::kind_descriptor* k : kv::all_kinds()) {
    const std::string ref = k->spec.name;
    for (const kv::property* p : kv::properties_of(k->spec.kind)) {
      if (p->fixed) continue;
      SCOPED_TRACE(ref + " / " + p->name);
      kv::decode_stats quick;
      const auto ts = traces_of(ref, *p, {}, &quick);
      if (quick.unjudged > 0) sampled.emplace_back(ref, p);
      const auto longs = where(ts, is_long);
      if (p->drive || p->rewrite) {
        EXPECT_TRUE(longs.empty());
        continue;
      }
      ASSERT_EQ(longs.size(), 1u);
      EXPECT_LE(longs[0], 6u);
      expect_long_start(ts[longs[0]], p->name);
    }
  }
  // The quick profile left some of the long cases' decodes to their shape check; deep, with a long case in each
  // cycle of sizes, judges every one.
  ASSERT_FALSE(sampled.empty());
  kv::run_options deep;
  deep.deep = true, deep.cases = 33, deep.max_size = 10;
  for (const auto& [ref, p] : sampled) {
    kv::decode_stats all;
    traces_of(ref, *p, deep, &all);
    EXPECT_EQ(all.unjudged, 0u) << ref << " / " << p->name;
  }
}

// The other paged properties' pools stay within 4096 rows: one property pays for the huge pool.
TEST(Shapes, OnlyPagedBlockAccountingDrawsAHugePool) {
  const auto huge = [](const kv::trace& t) { return t.config.capacity > huge_pool_blocks; };
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    kv::run_options o;
    o.seed = seed;
    EXPECT_EQ(where(traces_of("paged", "paged_block_accounting", o), huge).size(), 1u);
    EXPECT_TRUE(where(traces_of("paged", "order_preserved", o), [](const kv::trace& t) {
                  return rows_of(t.config) > 4096;
                }).empty());
  }
  // A cache whose storage rounds gets an ordinary long pool there (its format is orthogonal to block numbers).
  const auto e4m3 = traces_of("paged-e4m3", "paged_block_accounting");
  EXPECT_TRUE(where(e4m3, huge).empty());
  EXPECT_EQ(where(e4m3, is_long).size(), 1u);
}

// Two production cases per quick run (cases 2 and 43: size 1 of each cycle of sizes), in every kind, drivers
// included; their heads are production head dims, beam's groups production groups.
TEST(Shapes, EveryKindsQuickRunHasTwoProductionCases) {
  for (const kv::kind_descriptor* k : kv::all_kinds()) {
    const std::string ref = k->spec.name;
    SCOPED_TRACE(ref);
    const kv::property* numbers = kv::numbers_property(k->spec.kind);
    ASSERT_NE(numbers, nullptr);
    const auto ts = traces_of(ref, *numbers);
    EXPECT_EQ(where(ts, is_wide), (std::vector<std::size_t>{1, 42}));
    for (std::size_t i : where(ts, is_wide)) {
      const kv::cache_config& c = ts[i].config;
      if (c.kind == kv::cache_kind::latent) {  // DeepSeek-V3's rows, or a production latent width and a rotary part
        EXPECT_TRUE((c.d_v == 512 && c.d_k == 576) ||
                    (std::count(std::begin(production_dims), std::end(production_dims), c.d_v) && c.d_k <= c.d_v + 4))
            << c.d_k << " " << c.d_v;
        continue;
      }
      EXPECT_TRUE(std::count(std::begin(production_dims), std::end(production_dims), c.d_k)) << c.d_k;
      EXPECT_TRUE(std::count(std::begin(production_dims), std::end(production_dims), c.d_v)) << c.d_v;
      if (c.kind != kv::cache_kind::beam) continue;
      EXPECT_TRUE(c.q_heads == 5 * c.heads || c.q_heads == 7 * c.heads || c.q_heads == 8 * c.heads) << c.q_heads;
      EXPECT_TRUE(c.batch <= 2 && c.heads <= 2);
    }
    // Both widths are drawn from the production dims: none is wide on one side only.
    EXPECT_TRUE(where(ts, [](const kv::trace& t) {
                  return !is_long(t) && (t.config.d_k >= 32) != (t.config.d_v >= 32);
                }).empty());
  }
  const auto driven = traces_of("flat", "generation_fills_capacity");
  EXPECT_EQ(where(driven, is_wide).size(), 2u);
}

// A production case's commands are drawn as at size 12, not at its own size 1 (at most 2 ops for flat).
TEST(Shapes, ProductionCasesHaveOrdinaryLengths) {
  std::size_t longest = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    kv::run_options o;
    o.seed = seed;
    const auto ts = traces_of("flat", "order_preserved", o);
    for (std::size_t i : where(ts, is_wide)) longest = std::max(longest, ts[i].ops.size());
  }
  EXPECT_GT(longest, 2u);
}

// Deep: every case of the long size is long (three cycles of sizes 0 .. 10 here, as the deep profile's 1000
// cases up to 100 make ten); metamorphic properties have none in either profile.
TEST(Shapes, DeepRunHasALongCaseEachCycleOfSizes) {
  kv::run_options deep;
  deep.deep = true, deep.cases = 33, deep.max_size = 10;
  // Deep's ordinary windows reach 300, long ones start there.
  const auto longer = [](const kv::trace& t) { return t.config.capacity > 300; };
  EXPECT_EQ(where(traces_of("ring", "ring_positions_total", deep), longer).size(), 3u);
  EXPECT_TRUE(where(traces_of("ring", "ring_bulk_equals_singles", deep), longer).empty());
}

// Without production shapes (the vectors' short traces) neither kind of case is drawn.
TEST(Shapes, RunWithoutProductionShapesDrawsNeither) {
  kv::run_options small;
  small.production_shapes = false;
  const auto ts = traces_of("paged", "paged_block_accounting", small);
  ASSERT_EQ(ts.size(), 100u);
  EXPECT_TRUE(where(ts, [](const kv::trace& t) { return is_long(t) || t.config.d_k >= 32; }).empty());
}
