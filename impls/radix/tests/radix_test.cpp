// Unit tests of the reference radix cache: a lookup holds nothing, an admit matches again, retract and abort.
#include <gtest/gtest.h>

#include <vector>

#include "impls/radix/radix.h"

namespace kv = kvconform;

namespace {
/// Appends one step per token, its key and value the token's value.
void append_tokens(kv::radix& c, std::size_t s, const std::vector<std::int64_t>& tokens) {
  std::vector<double> rows(tokens.begin(), tokens.end());
  const std::size_t n = tokens.size();
  c.append(s, {rows.data(), {n, 1}}, {rows.data(), {n, 1}}, tokens);
}
const std::vector<std::int64_t> prompt = {1, 2, 3, 4};
}  // namespace

TEST(Radix, ALookupHoldsNothingAndAnAdmitHoldsTheHitAndItsPages) {
  kv::radix c(4, 2, 1, 1);
  const auto a = c.create({});
  append_tokens(c, a, prompt);
  c.release(a);
  const auto b = c.lookup(prompt);
  EXPECT_EQ(c.evictable_blocks(), 2u);
  EXPECT_EQ(c.hit_rows(), 0u);
  EXPECT_THROW(append_tokens(c, b, {5}), kv::index_error);  // waiting: nothing runs before the admit
  c.admit(b, 3);
  EXPECT_EQ(c.size(b), 4u);
  EXPECT_EQ(c.block_table(b).size(), 4u);  // the two cached pages, then two for three rows to come
  EXPECT_EQ(c.protected_blocks(), 2u);
  EXPECT_EQ(c.free_blocks(), 0u);
}

TEST(Radix, AnAdmitMatchesAgainAfterAnotherRequestEvictedTheHit) {
  kv::radix c(2, 2, 1, 1);
  const auto a = c.create({});
  append_tokens(c, a, prompt);
  c.release(a);
  const auto b = c.lookup(prompt), d = c.lookup({});
  c.admit(d, 4);  // takes both pages, evicting b's hit
  c.admit(b, 0);
  EXPECT_EQ(c.size(b), 0u);
  EXPECT_EQ(c.hit_rows(), 0u);
}

TEST(Radix, AnAdmitThatDoesNotFitChangesNothing) {
  kv::radix c(2, 2, 1, 1);
  const auto b = c.lookup(prompt);
  EXPECT_THROW(c.admit(b, 5), kv::capacity_error);
  EXPECT_EQ(c.free_blocks(), 2u);
  c.admit(b, 4);
  EXPECT_EQ(c.free_blocks(), 0u);
}

TEST(Radix, RetractKeepsInsertedChunksCachedAndMakesTheSequenceWait) {
  kv::radix c(4, 2, 1, 1);
  const auto b = c.lookup(prompt);
  c.admit(b, 4);
  append_tokens(c, b, {1, 2});
  c.retract(b);
  EXPECT_EQ(c.size(b), 0u);
  EXPECT_EQ(c.evictable_blocks(), 1u);  // the first chunk's page stays in the tree
  EXPECT_EQ(c.free_blocks(), 3u);
  c.admit(b, 2);
  EXPECT_EQ(c.size(b), 2u);  // its own chunk found again
  EXPECT_EQ(c.protected_blocks(), 1u);
  c.abort(b);
  EXPECT_EQ(c.evictable_blocks(), 1u);
  EXPECT_THROW(c.abort(b), kv::index_error);
}
