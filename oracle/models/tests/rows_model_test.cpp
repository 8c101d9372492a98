// Unit tests of the rows family's model (flat, ring, growing): outcomes, eviction, positions and storage rounding.
#include <gtest/gtest.h>

#include <algorithm>

#include "oracle/models/rows_model.h"

namespace kv = kvconform;

namespace {
kv::op append(std::size_t n, std::size_t dk, std::size_t dv, double start = 0) {
  kv::op o;
  for (std::size_t i = 0; i < n * dk; ++i) o.k.data.push_back(start + double(i));
  for (std::size_t i = 0; i < n * dv; ++i) o.v.data.push_back(-start - double(i));
  o.k.shape = {n, dk}, o.v.shape = {n, dv};
  return o;
}
}  // namespace

TEST(RowsModel, FlatRefusesPastCapacityAndAcceptsExactFill) {
  kv::rows_model m({kv::cache_kind::flat, 3, 1, 1}, {}, kv::rows_model::full::refuse);
  EXPECT_TRUE(m.apply(append(3, 1, 1)).accepted);
  const auto e = m.apply(append(1, 1, 1));
  EXPECT_FALSE(e.accepted);
  EXPECT_EQ(e.reasons, kv::refuse_capacity);
  EXPECT_EQ(m.size(), 3u);
}

TEST(RowsModel, ShapeErrorsAreRefusedWithNoChange) {
  kv::rows_model m({kv::cache_kind::flat, 3, 2, 1}, {}, kv::rows_model::full::refuse);
  EXPECT_EQ(m.apply(append(1, 3, 1)).reasons, kv::refuse_shape);
  kv::op mismatch = append(2, 2, 1);
  mismatch.v.shape = {1, 1}, mismatch.v.data.resize(1);
  EXPECT_EQ(m.apply(mismatch).reasons, kv::refuse_shape);
  EXPECT_EQ(m.size(), 0u);
  kv::op decode;
  decode.kind = kv::op_kind::decode;
  decode.q = kv::tensor::vector({1, 2});
  EXPECT_EQ(m.apply(decode).reasons, kv::refuse_empty);
}

TEST(RowsModel, RingKeepsTheLastWStepsWithPositions) {
  kv::rows_model m({kv::cache_kind::ring, 3, 1, 1}, {}, kv::rows_model::full::evict);
  m.apply(append(2, 1, 1, 0));
  m.apply(append(5, 1, 1, 10));  // n > W keeps the last W
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m.total(), 7);
  const auto s = m.observe();
  EXPECT_EQ(s.streams[0].keys, (std::vector<double>{12, 13, 14}));
  EXPECT_EQ(s.streams[0].positions, (std::vector<std::int64_t>{4, 5, 6}));
}

TEST(RowsModel, StorageRoundingFollowsTheProfile) {
  kv::numeric_profile f32;
  f32.storage = kv::precision::f32;
  kv::rows_model m({kv::cache_kind::flat, 1, 1, 1}, f32, kv::rows_model::full::refuse);
  kv::op o = append(1, 1, 1);
  o.k.data = {0.1};
  m.apply(o);
  EXPECT_EQ(m.observe().streams[0].keys[0], double(0.1f));
}

TEST(RowsModel, RingWrapsInItsSlotsAndDecodesTheRowsOldestFirst) {
  // Window 3 and one-row appends 0..7: every eviction moves the oldest slot, and both the view
  // and the decode problem list the rows oldest first across the wrap.
  kv::rows_model m({kv::cache_kind::ring, 3, 2, 1}, {}, kv::rows_model::full::evict);
  for (int step = 0; step < 8; ++step) {
    m.apply(append(1, 2, 1, 10.0 * step));
    std::vector<double> keys, values;
    for (int held = std::max(0, step - 2); held <= step; ++held) {
      keys.insert(keys.end(), {10.0 * held, 10.0 * held + 1});
      values.push_back(-10.0 * held);
    }
    const auto s = m.observe();
    EXPECT_EQ(s.streams[0].keys, keys) << "after step " << step;
    EXPECT_EQ(s.streams[0].values, values) << "after step " << step;
    kv::op decode;
    decode.kind = kv::op_kind::decode;
    decode.q = kv::tensor::vector({1, 0});
    const auto e = m.apply(decode);
    ASSERT_EQ(e.problems.size(), 1u);
    EXPECT_EQ(e.problems[0].keys, keys) << "after step " << step;
    EXPECT_EQ(e.problems[0].values, values) << "after step " << step;
    EXPECT_EQ(e.problems[0].n, keys.size() / 2);
  }
}
