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

namespace {
kv::policy_set declared(std::initializer_list<std::pair<const char*, const char*>> choices) {
  kv::policy_set p;
  for (const auto& [policy, choice] : choices) p.declare(policy, choice);
  return p;
}
}  // namespace

TEST(PrefixModelPolicies, AllButLastLeavesOutTheBlockOfTheLastToken) {
  kv::prefix_model m(config(4, 2), {}, declared({{"hit_limit", "all_but_last"}}));
  m.apply(create()), m.apply(append(0, {1, 2, 3, 4}));
  m.apply(create({1, 2, 3, 4}));
  EXPECT_EQ(m.size(1), 2u);  // of two whole blocks, the first
  EXPECT_TRUE(m.last().hit_stopped_before_last);
  m.apply(create({1, 2, 3, 4, 5}));
  EXPECT_EQ(m.size(2), 4u);  // the last token lies past them
  EXPECT_FALSE(m.last().hit_stopped_before_last);
}

TEST(PrefixModelPolicies, RegisteredDuplicatesStayCachedAndAreFoundOnceTheFirstIsEvicted) {
  kv::prefix_model m(config(3, 1), {}, declared({{"duplicates", "registered"}}));
  m.apply(create()), m.apply(append(0, {1}));
  m.apply(create()), m.apply(append(1, {1}));  // the same chain: registered too
  EXPECT_TRUE(m.last().duplicate);
  m.apply(release(0)), m.apply(release(1));
  EXPECT_EQ(counter(m.observe(), "evictable_blocks"), 2);  // the duplicate is evictable, not free
  m.apply(create()), m.apply(append(2, {7, 8}));           // one free block, then the first copy (released first) goes
  m.apply(create({1}));
  EXPECT_EQ(m.size(3), 1u);
  EXPECT_TRUE(m.last().found_second);
}

TEST(PrefixModelPolicies, AnAdoptedBlockReplacesTheSequencesOwnAndItsRows) {
  kv::prefix_model m(config(3, 1), {}, declared({{"duplicates", "adopted"}}));
  m.apply(create()), m.apply(append(0, {1}));
  m.apply(create());
  kv::op other = append(1, {1});
  other.k.data = {42};  // other rows for the same token: the cached block's are adopted
  m.apply(other);
  const auto s = m.observe();
  EXPECT_EQ(s.streams[1].keys.copy(), (std::vector<double>{1}));
  EXPECT_EQ(s.streams[0].blocks, s.streams[1].blocks);
  EXPECT_EQ(counter(s, "free_blocks"), 2);
}

TEST(PrefixModelPolicies, ALeafRunIsEvictedWhole) {
  kv::prefix_model m(config(4, 1), {}, declared({{"duplicates", "adopted"}, {"eviction", "leaf"}}));
  m.apply(create()), m.apply(append(0, {1, 2, 3})), m.apply(release(0));  // one run of three blocks
  m.apply(create());
  ASSERT_TRUE(m.apply(append(1, {7, 8})).accepted);  // one free block, then the whole run
  EXPECT_TRUE(m.last().evicted_run);
  EXPECT_EQ(counter(m.observe(), "free_blocks"), 2);
  EXPECT_EQ(counter(m.observe(), "evictable_blocks"), 0);
}

TEST(PrefixModelPolicies, OneQueueEvictsAnOlderCachedBlockBeforeALaterFreeOne) {
  kv::prefix_model m(config(2, 2), {}, declared({{"free_order", "one_queue"}}));
  m.apply(create()), m.apply(append(0, {1, 2}));
  m.apply(create()), m.apply(append(1, {3}));
  m.apply(release(0)), m.apply(release(1));  // the queue: [1,2]'s block, then the partly filled one
  m.apply(create()), m.apply(append(2, {5}));
  EXPECT_TRUE(m.last().evicted_before_free);
  m.apply(create({1, 2}));
  EXPECT_EQ(m.size(3), 0u);  // evicted where the default takes the free block
}

TEST(PrefixModelPolicies, KeptBlocksStayPastARollbackAndTakeTheNextRows) {
  kv::prefix_model m(config(3, 1), {}, declared({{"rollback_blocks", "kept"}}));
  m.apply(create()), m.apply(append(0, {1, 2}));
  m.apply(kv::op{.kind = kv::op_kind::rollback, .seq = 0, .count = 2});
  EXPECT_EQ(m.kept_blocks(0), 2u);
  EXPECT_EQ(counter(m.observe(), "free_blocks"), 1);
  ASSERT_TRUE(m.apply(append(0, {5})).accepted);  // the kept blocks are registered: the first is replaced
  EXPECT_EQ(counter(m.observe(), "evictable_blocks"), 1);
  EXPECT_EQ(counter(m.observe(), "free_blocks"), 0);
}
