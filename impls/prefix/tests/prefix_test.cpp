// Unit tests of the reference prefix cache: hits by hash chain, eviction of the least recently released block.
#include <gtest/gtest.h>

#include <vector>

#include "impls/prefix/prefix.h"

namespace kv = kvconform;

namespace {
/// Appends one step per token, its key and value the token's value.
void append_tokens(kv::prefix& c, std::size_t s, const std::vector<std::int64_t>& tokens) {
  std::vector<double> rows(tokens.begin(), tokens.end());
  const std::size_t n = tokens.size();
  c.append(s, {rows.data(), {n, 1}}, {rows.data(), {n, 1}}, tokens);
}
}  // namespace

TEST(Prefix, CreateFindsTheLongestCachedPrefixInWholeBlocks) {
  kv::prefix c(4, 2, 1, 1);
  const auto a = c.create({});
  append_tokens(c, a, {1, 2, 3, 4, 5});
  const std::vector<std::int64_t> same = {1, 2, 3, 4, 9}, other = {1, 2, 7, 4};
  const auto b = c.create(same);
  EXPECT_EQ(c.size(b), 4u);  // two full blocks; the partial fifth row is never shared
  EXPECT_EQ(c.hit_rows(), 4u);
  const auto d = c.create(other);
  EXPECT_EQ(c.size(d), 2u);  // [1, 2] hits; [7, 4] after it does not
  EXPECT_EQ(c.ref_count(c.block_table(a)[0]), 3u);
}

TEST(Prefix, EqualBlocksAfterDifferentPrefixesDoNotCollide) {
  kv::prefix c(4, 1, 1, 1);
  const auto a = c.create({});
  append_tokens(c, a, {1, 5});
  const std::vector<std::int64_t> other = {2, 5};
  EXPECT_EQ(c.size(c.create(other)), 0u);
}

TEST(Prefix, ReleasedBlocksStayCachedAndTheLeastRecentlyReleasedIsEvictedFirst) {
  kv::prefix c(2, 1, 1, 1);
  const auto a = c.create({});
  append_tokens(c, a, {1});
  const auto b = c.create({});
  append_tokens(c, b, {2});
  c.release(a), c.release(b);
  EXPECT_EQ(c.evictable_blocks(), 2u);
  EXPECT_EQ(c.free_blocks(), 0u);
  const auto d = c.create({});
  append_tokens(c, d, {3});  // evicts [1], released first
  const std::vector<std::int64_t> one = {1}, two = {2};
  EXPECT_EQ(c.size(c.create(one)), 0u);
  EXPECT_EQ(c.size(c.create(two)), 1u);
}

TEST(Prefix, AnAppendThatDoesNotFitChangesNothing) {
  kv::prefix c(1, 2, 1, 1);
  const auto a = c.create({});
  EXPECT_THROW(append_tokens(c, a, {1, 2, 3}), kv::capacity_error);
  EXPECT_EQ(c.size(a), 0u);
  EXPECT_EQ(c.free_blocks(), 1u);
  std::vector<double> row = {1};
  EXPECT_THROW(c.append(a, {row.data(), {1}}, {row.data(), {1}}, {}), kv::shape_error);  // one step, no token
}

TEST(Prefix, AnAdmitUnderBlockEvictionMatchesAgainAndEvictsTheLeastRecentlyReleased) {
  kv::prefix c(4, 1, 1, 1);
  const auto a = c.create({});
  append_tokens(c, a, {1, 2});
  c.release(a);  // [1, 2] evictable, released before [1]
  const std::vector<std::int64_t> prompt = {1, 2, 3};
  const auto b = c.lookup(prompt);
  EXPECT_EQ(c.size(b), 0u);
  const double q = 1;
  EXPECT_THROW(c.decode_step(b, {&q, {1}}), kv::index_error);  // waiting: nothing runs before the admit
  const auto d = c.lookup({});
  c.admit(d, 3);  // the two free blocks, then [1, 2], the least recently released
  c.admit(b, 0);
  EXPECT_EQ(c.size(b), 1u);  // [1] still cached; [1, 2] evicted since the lookup
  EXPECT_THROW(c.admit(b, 0), kv::index_error);
  c.retract(b);
  EXPECT_EQ(c.evictable_blocks(), 1u);
  c.abort(b), c.abort(d);
  EXPECT_EQ(c.free_blocks(), 3u);
}
