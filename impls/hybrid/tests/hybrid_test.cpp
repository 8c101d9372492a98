// Unit tests of the reference hybrid cache: windows free blocks, shared and cross layers, fork, refusals.
#include <gtest/gtest.h>

#include <vector>

#include "impls/hybrid/hybrid.h"

namespace kv = kvconform;

namespace {
/// Layers 0 (sliding, window 2), 1 (full), 2 (shared: reads 0), and a cross layer of 2 rows.
kv::hybrid_layers layout() { return {3, 2, 0, 2, 1, 2}; }

kv::hybrid::seq_id create(kv::hybrid& c, double from) {
  std::vector<double> k = {from, from + 1}, v = {-from, -from - 1};
  return c.create({k.data(), {2, 1}}, {v.data(), {2, 1}});
}
/// Appends n steps to both writing layers: layer 0's keys from, from + 1, ..., layer 1's their tenfold.
void append(kv::hybrid& c, kv::hybrid::seq_id s, double from, std::size_t n) {
  std::vector<double> k, v;
  for (std::size_t w = 0; w < 2; ++w)
    for (std::size_t i = 0; i < n; ++i) k.push_back((w ? 10 : 1) * (from + double(i))), v.push_back(-k.back());
  c.append(s, {k.data(), {2, n, 1}}, {v.data(), {2, n, 1}});
}
std::vector<double> keys(const kv::hybrid& c, kv::hybrid::seq_id s, std::size_t layer) {
  const auto m = c.keys(s, layer);
  return {m.data(), m.data() + m.size()};
}
}  // namespace

TEST(Hybrid, SlidingLayerReadsItsWindowAndFreesPassedBlocks) {
  kv::hybrid c(16, 2, 1, 1, layout());
  const auto s = create(c, 100);
  append(c, s, 0, 7);
  EXPECT_EQ(keys(c, s, 0), (std::vector<double>{5, 6}));
  EXPECT_EQ(keys(c, s, 1), (std::vector<double>{0, 10, 20, 30, 40, 50, 60}));
  EXPECT_EQ(c.block_table(s, 0).size(), 2u);  // rows 4-5 and 6: the window is rows 5 and 6
  EXPECT_EQ(c.block_table(s, 1).size(), 4u);
  EXPECT_EQ(c.group_blocks(kv::hybrid_group::sliding), 2u);
  EXPECT_EQ(c.group_blocks(kv::hybrid_group::cross), 1u);
  EXPECT_EQ(c.free_blocks(), 16u - 2 - 4 - 1);
}

TEST(Hybrid, SharedLayerReadsItsProducerAndCrossLayerTheEncoder) {
  kv::hybrid c(16, 2, 1, 1, layout());
  const auto s = create(c, 100);
  append(c, s, 0, 5);
  EXPECT_EQ(keys(c, s, 2), keys(c, s, 0));
  EXPECT_TRUE(c.block_table(s, 2).empty());
  EXPECT_EQ(keys(c, s, 3), (std::vector<double>{100, 101}));
  std::vector<double> q = {1};
  EXPECT_EQ(c.decode_step(s, 3, {q.data(), {1}}).weights.size(), 2);
  EXPECT_THROW(c.decode_step(s, 4, {q.data(), {1}}), kv::index_error);
}

TEST(Hybrid, ForkSharesAndAnAppendCopiesTheSharedPartlyFilledBlocks) {
  kv::hybrid c(16, 2, 1, 1, layout());
  const auto a = create(c, 100);
  append(c, a, 0, 3);
  const auto b = c.fork(a);
  EXPECT_EQ(c.block_table(b, 1), c.block_table(a, 1));
  append(c, b, 50, 1);
  EXPECT_EQ(keys(c, a, 1), (std::vector<double>{0, 10, 20}));
  EXPECT_EQ(keys(c, b, 1), (std::vector<double>{0, 10, 20, 500}));
  EXPECT_NE(c.block_table(b, 1).back(), c.block_table(a, 1).back());
  EXPECT_EQ(c.block_table(b, 1).front(), c.block_table(a, 1).front());
}

TEST(Hybrid, ARefusedAppendChangesNothingAndTheWindowsFreedBlocksServeIt) {
  kv::hybrid c(4, 2, 1, 1, {2, 2, 0, 2, 0, 0});  // layer 0 sliding (window 2), layer 1 full
  const auto s = c.create({nullptr, {0, 1}}, {nullptr, {0, 1}});
  append(c, s, 0, 4);  // full: 2 blocks, sliding: block 1 only
  EXPECT_EQ(c.free_blocks(), 1u);
  append(c, s, 4, 2);  // full takes 1; sliding frees block 1 and takes 1
  EXPECT_EQ(c.free_blocks(), 0u);
  EXPECT_THROW(append(c, s, 6, 2), kv::capacity_error);  // each group needs a block; the window frees only one
  EXPECT_EQ(c.size(s), 6u);
  EXPECT_EQ(keys(c, s, 0), (std::vector<double>{4, 5}));
  std::vector<double> bad = {1, 2};
  EXPECT_THROW(c.append(s, {bad.data(), {1, 2, 1}}, {bad.data(), {1, 2, 1}}), kv::shape_error);
  EXPECT_EQ(c.size(s), 6u);
}
