// Beam masks and reorders as engines make them: every mask shape and every cycle shape at every batch size.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <numeric>
#include <string>

#include "properties/kinds/beam/inputs.h"

namespace kv = kvconform;

namespace {
std::vector<double> row_of(const kv::mask_row& r, std::size_t len) { return kv::engine_mask({r}, len).data; }

/// Per shape of classify_reorder, how many of `draws` reorders of `batch` rows (seeds 0 ..) have it.
std::map<std::string, int> reorder_counts(std::size_t batch, int draws) {
  std::map<std::string, int> n;
  for (int seed = 0; seed < draws; ++seed) {
    const auto index = kv::draw_reorder(batch, kv::reorder_choices(batch, static_cast<std::uint64_t>(seed)));
    EXPECT_EQ(index.size(), batch);
    for (std::int64_t i : index) EXPECT_TRUE(i >= 0 && static_cast<std::size_t>(i) < batch);
    const kv::reorder_shapes s = kv::classify_reorder(index);
    n["identity"] += s.identity, n["fixed point"] += s.fixed_point, n["2-cycle"] += s.two_cycle;
    n["3-cycle"] += s.three_cycle, n["longer cycle"] += s.long_cycle, n["repeat"] += s.repeat;
  }
  return n;
}
}  // namespace

TEST(BeamMasks, EachShapeMakesTheRowsEnginesMake) {
  using m = kv::mask_row;
  EXPECT_EQ(row_of({m::left_padding, 2}, 5), (std::vector<double>{0, 0, 1, 1, 1}));
  // Two positions of padding, one sink, a window of the last two: a hole between them.
  EXPECT_EQ(row_of({m::window, 2, 1, 1}, 8), (std::vector<double>{0, 0, 1, 0, 0, 0, 1, 1}));
  // One of padding, then two rejected draft tokens masked in place, then live ones again.
  EXPECT_EQ(row_of({m::dropped_draft, 1, 2, 1}, 7), (std::vector<double>{0, 1, 1, 0, 0, 1, 1}));
  EXPECT_EQ(row_of({m::single_key, 9}, 4), (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(row_of({m::fully_masked, 3, 3, 3}, 3), (std::vector<double>{0, 0, 0}));
  // Parameters beyond the length fold into it: padding longer than the row masks all of it.
  EXPECT_EQ(row_of({m::left_padding, 99}, 3), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(row_of({m::window, 99, 99, 99}, 3), (std::vector<double>{0, 0, 0}));
}

TEST(BeamMasks, ClassifiesEveryShape) {
  const auto shapes = [](std::vector<double> row) {
    const std::size_t len = row.size();
    return kv::classify_mask({{1, len}, std::move(row)});
  };
  EXPECT_TRUE(shapes({0, 1, 1}).left_padding);
  EXPECT_FALSE(shapes({1, 1, 1}).left_padding);
  EXPECT_TRUE(shapes({1, 0, 1}).hole);
  EXPECT_FALSE(shapes({0, 1, 1}).hole);
  EXPECT_TRUE(shapes({1, 1, 0}).newest_masked);
  EXPECT_TRUE(shapes({0, 1, 0}).single_key);
  EXPECT_FALSE(shapes({1}).single_key);  // a single position is no choice
  EXPECT_TRUE(shapes({0, 0}).fully_masked);
  EXPECT_FALSE(kv::classify_mask({}).fully_masked);  // no mask: every position attends
}

TEST(BeamMasks, EveryShapeAtEveryLength) {
  // The generator draws each parameter in [0, capacity]; every shape shows at every length from 3
  // (a hole needs a live position on each side).
  for (std::size_t len = 3; len <= 10; ++len) {
    kv::mask_shapes seen;
    for (int kind = 0; kind < kv::mask_row::shapes; ++kind)
      for (std::size_t a = 0; a <= len; ++a)
        for (std::size_t b = 0; b <= len; ++b) {
          const kv::mask_shapes s = kv::classify_mask(kv::engine_mask({{kind, a, b, len - b}}, len));
          seen.left_padding |= s.left_padding, seen.hole |= s.hole, seen.newest_masked |= s.newest_masked;
          seen.single_key |= s.single_key, seen.fully_masked |= s.fully_masked;
        }
    EXPECT_TRUE(seen.left_padding && seen.hole && seen.newest_masked && seen.single_key && seen.fully_masked) << len;
  }
}

TEST(BeamReorders, ClassifiesCycleShapes) {
  const auto s = [](std::vector<std::int64_t> i) { return kv::classify_reorder(i); };
  EXPECT_TRUE(s({0, 1, 2}).identity);
  EXPECT_FALSE(s({0, 1, 2}).fixed_point);
  EXPECT_TRUE(s({1, 2, 0}).three_cycle);
  EXPECT_FALSE(s({1, 2, 0}).two_cycle || s({1, 2, 0}).repeat || s({1, 2, 0}).fixed_point);
  EXPECT_TRUE(s({1, 0, 2}).two_cycle && s({1, 0, 2}).fixed_point);
  EXPECT_TRUE(s({1, 2, 3, 0}).long_cycle);
  EXPECT_TRUE(s({0, 0, 2}).repeat && s({0, 0, 2}).fixed_point);
  // A tail into a cycle is no cycle: 3 -> 0 -> 1 -> 2 -> 0 has one 3-cycle.
  EXPECT_TRUE(s({1, 2, 0, 0}).three_cycle && s({1, 2, 0, 0}).repeat && !s({1, 2, 0, 0}).long_cycle);
}

TEST(BeamReorders, EveryCycleShapeAtEveryBatchSize) {
  // Over 200 draws (fixed seeds), each shape is common at every batch size from 2 to 8: at least
  // a tenth of the draws (the rarest, 3-cycles at B = 3, come to 39).
  for (std::size_t batch = 2; batch <= 8; ++batch) {
    const auto n = reorder_counts(batch, 200);
    for (const char* shape : {"fixed point", "2-cycle", "repeat"})
      EXPECT_GE(n.at(shape), 20) << shape << " B=" << batch;
    if (batch >= 3) {
      EXPECT_GE(n.at("3-cycle"), 20) << "B=" << batch;
    }
    if (batch >= 4) {
      EXPECT_GE(n.at("longer cycle"), 5) << "B=" << batch;
    }
    if (batch <= 4) {  // keeping every row is rare beyond (all cycles of one row, no repeat)
      EXPECT_GE(n.at("identity"), 5) << "B=" << batch;
    }
  }
}

TEST(BeamReorders, ZeroChoicesShrinkToOneRepeat) {
  for (std::size_t batch = 2; batch <= 8; ++batch) {
    std::vector<std::int64_t> want(batch);
    std::iota(want.begin(), want.end(), 0);
    want[0] = 1;  // row 0 continues row 1; every other row keeps its own
    EXPECT_EQ(kv::draw_reorder(batch, {}), want);
    EXPECT_EQ(kv::draw_reorder(batch, std::vector<std::uint64_t>(5 * batch + 4, 0)), want);
  }
  EXPECT_EQ(kv::draw_reorder(1, {}), std::vector<std::int64_t>{0});
}

TEST(BeamReorders, TheTestHookRemovesEveryThreeCycle) {
  // Repeats never close a new cycle, so without the 3-cycle choice no reorder has one.
  ::setenv("KVCONFORM_TEST_DISABLE_GENERATOR", "beam-reorder-3-cycle", 1);
  for (std::size_t batch = 3; batch <= 8; ++batch) {
    const auto n = reorder_counts(batch, 300);
    EXPECT_EQ(n.at("3-cycle"), 0) << batch;
    EXPECT_GE(n.at("2-cycle"), 20) << batch;
  }
  ::unsetenv("KVCONFORM_TEST_DISABLE_GENERATOR");
  EXPECT_GT(reorder_counts(3, 100).at("3-cycle"), 0);
}
