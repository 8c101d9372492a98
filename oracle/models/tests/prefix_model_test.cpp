// Unit tests of the prefix model: hits by whole token prefix, duplicates, LRU eviction, accounting.
#include <gtest/gtest.h>

#include "oracle/models/prefix_model.h"
#include "oracle/models/tests/block_pool_test.h"

namespace kv = kvconform;

namespace {
using kv::model_tests::counter;
kv::cache_config config(std::size_t blocks, std::size_t block_size) {
  return kv::model_tests::pool_config(kv::cache_kind::prefix, blocks, block_size);
}
kv::op create(std::vector<std::int64_t> tokens = {}) {
  return {.kind = kv::op_kind::create, .tokens = std::move(tokens)};
}
kv::op append(std::int64_t seq, std::vector<std::int64_t> tokens) {
  kv::op o{.kind = kv::op_kind::append, .seq = seq, .tokens = tokens};
  o.k.shape = o.v.shape = {tokens.size(), 1};
  for (std::int64_t t : tokens) o.k.data.push_back(double(t)), o.v.data.push_back(double(-t));
  return o;
}
kv::op release(std::int64_t seq) { return {.kind = kv::op_kind::release, .seq = seq}; }
}  // namespace

TEST(PrefixModel, HitsAreTheLongestRegisteredPrefixInWholeBlocks) {
  kv::prefix_model m(config(4, 2), {});
  m.apply(create());
  ASSERT_TRUE(m.apply(append(0, {1, 2, 3, 4, 5})).accepted);
  m.apply(create({1, 2, 3, 9}));
  EXPECT_EQ(m.size(1), 2u);
  m.apply(create({1, 2, 3, 4, 5}));
  EXPECT_EQ(m.size(2), 4u);  // the fifth row's block is partly filled: never a hit
  EXPECT_EQ(counter(m.observe(), "hit_rows"), 6);
}

TEST(PrefixModel, TheLeastRecentlyReleasedBlockIsEvictedFirstAndAReuseRefreshesIt) {
  kv::prefix_model m(config(3, 1), {});
  for (std::int64_t t : {1, 2}) m.apply(create()), m.apply(append(t - 1, {t})), m.apply(release(t - 1));
  m.apply(create({1})), m.apply(release(2));  // [1] reused and released again: now the most recent
  m.apply(create());
  ASSERT_TRUE(m.apply(append(3, {7, 8})).accepted);  // one free block, then [2] is evicted
  EXPECT_EQ(counter(m.observe(), "evictable_blocks"), 1);
  m.apply(create({1})), m.apply(create({2}));
  EXPECT_EQ(m.size(4), 1u);
  EXPECT_EQ(m.size(5), 0u);
}

TEST(PrefixModel, AnAppendThatDoesNotFitIsRefusedWithNothingChanged) {
  kv::prefix_model m(config(1, 1), {});
  m.apply(create());
  const auto before = m.observe();
  const auto e = m.apply(append(0, {1, 2}));
  EXPECT_FALSE(e.accepted);
  EXPECT_EQ(e.reasons, kv::refuse_capacity);
  EXPECT_EQ(kv::diff(before, m.observe()), "");
  kv::op wrong = append(0, {1});
  wrong.tokens.push_back(2);  // two tokens for one step
  EXPECT_EQ(m.apply(wrong).reasons, kv::refuse_shape);
}
