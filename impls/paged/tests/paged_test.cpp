// Unit tests of the reference paged cache: block accounting, fork, copy-on-write, refusals, preemption, poison.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "impls/flat/flat.h"
#include "impls/paged/paged.h"

namespace kv = kvconform;

namespace {
/// Appends n one-wide rows with keys from, from + 1, ... and values their negatives.
std::vector<std::size_t> append_rows(kv::paged& p, std::size_t s, double from, std::size_t n) {
  std::vector<double> k, v;
  for (std::size_t i = 0; i < n; ++i) k.push_back(from + double(i)), v.push_back(-from - double(i));
  return p.append(s, {k.data(), {n, 1}}, {v.data(), {n, 1}});
}
/// A new sequence with n rows from `from`, and its fork: {parent, child}.
std::pair<std::size_t, std::size_t> forked(kv::paged& p, double from, std::size_t n) {
  const auto parent = p.create();
  append_rows(p, parent, from, n);
  return {parent, p.fork(parent)};
}
std::vector<double> keys(const kv::paged& p, std::size_t s) {
  const auto m = p.keys(s);
  return {m.data(), m.data() + m.size()};
}
}  // namespace

TEST(Paged, AllocatesBlocksOnlyAsRowsArrive) {
  kv::paged p(4, 2, 1, 1);
  const auto s = p.create();
  EXPECT_EQ(p.free_blocks(), 4u);
  EXPECT_TRUE(p.block_table(s).empty());
  append_rows(p, s, 0, 3);
  EXPECT_EQ(p.block_table(s).size(), 2u);
  EXPECT_EQ(p.free_blocks(), 2u);
  EXPECT_EQ(p.bytes_in_use(), 2 * 2 * (1 + 1) * sizeof(double));
  EXPECT_EQ(keys(p, s), (std::vector<double>{0, 1, 2}));
}

TEST(Paged, ExactFillUsesTheLastSlotOfTheLastBlockAndOneMoreIsRefusedWithNoChange) {
  kv::paged p(2, 3, 1, 1);
  const auto s = p.create();
  append_rows(p, s, 0, 4);
  EXPECT_THROW(append_rows(p, s, 10, 3), kv::capacity_error);
  EXPECT_EQ(p.free_blocks(), 0u);
  EXPECT_EQ(p.size(s), 4u);
  append_rows(p, s, 4, 2);  // exactly the last free slot
  EXPECT_EQ(keys(p, s), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_THROW(append_rows(p, s, 6, 1), kv::capacity_error);
  EXPECT_EQ(p.size(s), 6u);
}

TEST(Paged, ForkSharesEveryBlockWithoutAllocating) {
  kv::paged p(4, 2, 1, 1);
  const auto [a, b] = forked(p, 0, 4);
  EXPECT_EQ(p.block_table(b), p.block_table(a));
  EXPECT_EQ(p.free_blocks(), 2u);
  for (std::size_t block : p.block_table(a)) EXPECT_EQ(p.ref_count(block), 2u);
}

TEST(Paged, CopyOnWriteExactlyWhenTheSharedLastBlockIsPartlyFilled) {
  kv::paged p(6, 2, 1, 1);
  const auto [full, full_fork] = forked(p, 0, 2);
  append_rows(p, full_fork, 10, 1);  // the shared block is full: a new block, no copy
  EXPECT_EQ(p.block_table(full_fork)[0], p.block_table(full)[0]);
  EXPECT_EQ(p.free_blocks(), 4u);

  const auto [part, part_fork] = forked(p, 20, 1);
  const std::size_t shared = p.block_table(part)[0];
  append_rows(p, part_fork, 30, 1);  // partly filled and shared: copied first
  EXPECT_NE(p.block_table(part_fork)[0], shared);
  EXPECT_EQ(p.ref_count(shared), 1u);
  EXPECT_EQ(keys(p, part), (std::vector<double>{20}));
  EXPECT_EQ(keys(p, part_fork), (std::vector<double>{20, 30}));
  append_rows(p, part, 40, 1);  // no longer shared: written in place
  EXPECT_EQ(p.block_table(part)[0], shared);
  EXPECT_EQ(keys(p, part), (std::vector<double>{20, 40}));
}

TEST(Paged, ACopyThatFindsNoFreeBlockIsRefused) {
  kv::paged p(1, 2, 1, 1);
  const auto [a, b] = forked(p, 0, 1);
  EXPECT_THROW(append_rows(p, b, 1, 1), kv::capacity_error);
  EXPECT_EQ(p.ref_count(p.block_table(a)[0]), 2u);
  p.release(a);
  append_rows(p, b, 1, 1);  // b alone holds the block now: written in place
  EXPECT_EQ(keys(p, b), (std::vector<double>{0, 1}));
}

TEST(Paged, ReleaseReturnsUnsharedBlocksAndTheyAreReused) {
  kv::paged p(2, 1, 1, 1);
  const auto [a, b] = forked(p, 0, 2);
  p.release(a);
  EXPECT_EQ(p.free_blocks(), 0u);
  p.release(b);
  EXPECT_EQ(p.free_blocks(), 2u);
  const auto c = p.create();
  append_rows(p, c, 5, 2);
  EXPECT_EQ(keys(p, c), (std::vector<double>{5, 6}));
}

TEST(Paged, UnknownReleasedAndMalformedAreRefused) {
  kv::paged p(2, 2, 1, 1);
  const auto a = p.create();
  p.release(a);
  EXPECT_THROW(append_rows(p, a, 0, 1), kv::index_error);
  EXPECT_THROW(p.fork(a), kv::index_error);
  EXPECT_THROW(p.release(a), kv::index_error);
  EXPECT_THROW(p.release(99), kv::index_error);
  const auto b = p.create();
  const std::vector<double> k{1, 2}, v{1};
  EXPECT_THROW(p.append(b, {k.data(), {2, 1}}, {v.data(), {1, 1}}), kv::shape_error);
  EXPECT_THROW(p.append(b, {k.data(), {1, 2}}, {v.data(), {1, 1}}), kv::shape_error);
  EXPECT_EQ(p.size(b), 0u);
  EXPECT_EQ(p.free_blocks(), 2u);
}

TEST(Paged, PreemptionReleasesTheNewestOthersUntilTheAppendFits) {
  kv::paged p(3, 1, 1, 1, /*preempt=*/true);
  const auto a = p.create(), b = p.create(), c = p.create();
  append_rows(p, a, 0, 1), append_rows(p, b, 1, 1), append_rows(p, c, 2, 1);
  EXPECT_EQ(append_rows(p, a, 3, 1), (std::vector<std::size_t>{c}));
  EXPECT_THROW(p.size(c), kv::index_error);
  EXPECT_EQ(p.size(b), 1u);
  EXPECT_EQ(p.free_blocks(), 0u);
}

TEST(Paged, PreemptionThatCannotMakeRoomRefusesAndReleasesNothing) {
  kv::paged p(2, 1, 1, 1, /*preempt=*/true);
  const auto a = p.create(), b = p.create();
  append_rows(p, b, 0, 1);
  EXPECT_THROW(append_rows(p, a, 0, 3), kv::capacity_error);
  EXPECT_EQ(p.size(b), 1u);
  EXPECT_EQ(p.free_blocks(), 1u);
}

TEST(Paged, PreemptingTheSharerOfTheLastBlockSavesTheCopy) {
  kv::paged p(1, 2, 1, 1, /*preempt=*/true);
  const auto [a, b] = forked(p, 0, 1);
  EXPECT_EQ(append_rows(p, a, 1, 1), (std::vector<std::size_t>{b}));
  EXPECT_EQ(keys(p, a), (std::vector<double>{0, 1}));
}

TEST(Paged, DecodeMatchesTheFlatCacheOverTheSameRows) {
  kv::paged p(5, 2, 1, 1);
  kv::flat f(5, 1, 1);
  const auto [a, b] = forked(p, 0, 1);  // interleaves a's and b's blocks in the pool
  append_rows(p, b, 7, 1), append_rows(p, a, 1, 2), append_rows(p, b, 8, 2), append_rows(p, a, 3, 2);
  const std::vector<double> k{0, 1, 2, 3, 4}, v{0, -1, -2, -3, -4}, q{0.3};
  f.append({k.data(), {5, 1}}, {v.data(), {5, 1}});
  const auto got = p.decode_step(a, {q.data(), {1}});
  const auto want = kv::decode_step({q.data(), {1}}, f);
  EXPECT_EQ(got.output, want.output);
  EXPECT_EQ(got.weights, want.weights);
  EXPECT_THROW(p.decode_step(p.create(), {q.data(), {1}}), kv::empty_error);
}

TEST(Paged, UnusedAndFreedSlotsArePoisoned) {
  if (!kv::poison_free_slots) GTEST_SKIP() << "built with KVCONFORM_NO_POISON: poisoning is off by request";
  kv::paged p(1, 3, 1, 1);
  const auto s = p.create();
  append_rows(p, s, 5, 1);
  const std::size_t b = p.block_table(s)[0];
  EXPECT_EQ(p.block_keys(b)(0, 0), 5);
  EXPECT_TRUE(std::isnan(p.block_keys(b)(1, 0)));
  p.release(s);
  EXPECT_TRUE(std::isnan(p.block_keys(b)(0, 0)));
}
