// Production shapes reach every kind (docs/design.md §4.4): production cases, long cases, and their first ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "properties/generate/run_property.h"
#include "properties/runners/builtin.h"

namespace kv = kvconform;

namespace {
// What long cases reach (properties/generate/shapes.h, which needs RapidCheck's headers).
constexpr std::size_t huge_pool_blocks = std::size_t{1} << 16, big_beam_elements = std::size_t{1} << 24;

/// Every trace a property's run generated, in order (each passes on a reference).
std::vector<kv::trace> traces_of(const std::string& impl, const std::string& property, kv::run_options o = {}) {
  const kv::implementation* i = kv::find_implementation(impl);
  EXPECT_NE(i, nullptr) << impl;
  const kv::property* p = kv::find_property(property, i->kind);
  EXPECT_NE(p, nullptr) << property;
  std::vector<kv::trace> seen;
  o.on_trace = [&seen](const kv::trace& t) { seen.push_back(t); };
  const kv::property_run r = kv::run_property(*p, *i, o);
  EXPECT_TRUE(r.error.empty() && !r.fail) << r.error << (r.fail ? r.fail->message : "");
  return seen;
}
/// The indices of the traces whose config `is`.
template <class Pred>
std::vector<std::size_t> where(const std::vector<kv::trace>& ts, Pred is) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < ts.size(); ++i)
    if (is(ts[i])) at.push_back(i);
  return at;
}
std::size_t first_append_rows(const kv::trace& t) {
  for (const kv::op& o : t.ops)
    if (o.kind == kv::op_kind::append) return o.k.shape.size() == 2 ? o.k.shape[0] : 1;
  return 0;
}
}  // namespace

TEST(Shapes, QuickRunHasTwoLongCasesEarlyEachStartingWithABulkAppend) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    kv::run_options o;
    o.seed = seed;
    const auto ts = traces_of("flat", "order_preserved", o);
    ASSERT_EQ(ts.size(), 100u);
    const auto longs = where(ts, [](const kv::trace& t) { return t.config.capacity >= 300; });
    ASSERT_EQ(longs.size(), 2u) << "seed " << seed;
    EXPECT_LE(longs[0], 6u);
    for (std::size_t i : longs) {
      EXPECT_GE(ts[i].ops.size(), 3u);
      EXPECT_GE(first_append_rows(ts[i]) * 8, ts[i].config.capacity * 7) << "seed " << seed << " case " << i;
      EXPECT_LE(std::max(ts[i].config.d_k, ts[i].config.d_v), 4u);
    }
  }
}

TEST(Shapes, QuickRunHasFiveProductionCasesTheFirstItsThird) {
  const auto ts = traces_of("flat", "decode_within_bound");
  const auto wide = where(ts, [](const kv::trace& t) { return t.config.d_k >= 32 && t.config.d_v >= 32; });
  ASSERT_EQ(wide.size(), 5u);
  EXPECT_EQ(wide[0], 2u);
  EXPECT_TRUE(where(ts, [](const kv::trace& t) { return (t.config.d_k >= 32) != (t.config.d_v >= 32); }).empty());
  // Drivers draw production shapes too.
  const auto driven = traces_of("flat", "generation_fills_capacity");
  EXPECT_EQ(where(driven, [](const kv::trace& t) { return t.config.d_k >= 32; }).size(), 5u);
}

TEST(Shapes, DeepRunHasOneLongCasePerCycleOfSizesAndMetamorphicPropertiesNone) {
  kv::run_options deep;  // three cycles of sizes 0 .. 10 (the deep profile's 1000 cases up to 100 make ten)
  deep.deep = true, deep.cases = 33, deep.max_size = 10;
  const auto ts = traces_of("ring", "ring_positions_total", deep);
  EXPECT_EQ(where(ts, [](const kv::trace& t) { return t.config.capacity > 300; }).size(), 3u);
  const auto rewrites = traces_of("ring", "ring_bulk_equals_singles");
  EXPECT_TRUE(where(rewrites, [](const kv::trace& t) { return t.config.capacity >= 300; }).empty());
}

TEST(Shapes, FormatReferencesShareHasNoneOfThem) {
  kv::run_options share;
  share.cases = 6;  // a sixteenth of the quick profile's hundred (docs/numerics.md §6.5)
  const auto ts = traces_of("flat-q8_0", "order_preserved", share);
  ASSERT_EQ(ts.size(), 6u);
  for (const kv::trace& t : ts) EXPECT_LT(t.config.capacity, 300u);
}

TEST(Shapes, PagedBlockAccountingFillsMoreThanTwoToTheSixteenBlocks) {
  const auto ts = traces_of("paged", "paged_block_accounting");
  const auto huge = where(ts, [](const kv::trace& t) { return t.config.capacity > huge_pool_blocks; });
  ASSERT_EQ(huge.size(), 2u);
  for (std::size_t i : huge) {
    EXPECT_EQ(ts[i].config.block_size, 1u);
    EXPECT_GT(first_append_rows(ts[i]), huge_pool_blocks) << "case " << i;
  }
  // The other paged properties' long pools stay within 4096 rows.
  const auto other = traces_of("paged", "paged_sequence_isolation");
  EXPECT_TRUE(where(other, [](const kv::trace& t) { return t.config.capacity > 4096; }).empty());
}

TEST(Shapes, BeamLongCasesAreBigAndStartInTheLastLayer) {
  const auto ts = traces_of("beam", "views_filled_rows");
  const auto big = where(ts, [](const kv::trace& t) {
    const kv::cache_config& c = t.config;
    return double(c.layers) * double(c.batch) * double(c.heads) * double(c.capacity) * double(c.d_k) >
           double(big_beam_elements);
  });
  ASSERT_EQ(big.size(), 2u);
  for (std::size_t i : big) {
    const kv::cache_config& c = ts[i].config;
    EXPECT_GT((c.layers - 1) * c.batch * c.heads * c.capacity * c.d_k, big_beam_elements);
    EXPECT_GE(c.d_k, 32u);
    ASSERT_FALSE(ts[i].ops.empty());
    EXPECT_EQ(ts[i].ops[0].kind, kv::op_kind::update);
    EXPECT_EQ(ts[i].ops[0].layer, static_cast<std::int64_t>(c.layers - 1));
  }
  const auto grouped = where(ts, [](const kv::trace& t) { return t.config.q_heads / t.config.heads >= 5; });
  EXPECT_EQ(grouped.size(), 5u);  // the production cases
}
