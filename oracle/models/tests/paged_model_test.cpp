// Unit tests of the paged model: handles, outcomes, block accounting, copy-on-write and preemption victims.
#include <gtest/gtest.h>

#include "oracle/models/paged_model.h"
#include "oracle/models/tests/block_pool_test.h"

namespace kv = kvconform;

namespace {
using kv::model_tests::counter;
kv::cache_config pool(std::size_t blocks, std::size_t block_size, bool preempt = false) {
  kv::cache_config c = kv::model_tests::pool_config(kv::cache_kind::paged, blocks, block_size);
  c.preempt = preempt;
  return c;
}
kv::op seq_op(kv::op_kind kind, std::int64_t seq = 0) {
  kv::op o;
  o.kind = kind, o.seq = seq;
  return o;
}
kv::op append(std::int64_t seq, std::size_t n, double start = 0) {
  kv::op o = seq_op(kv::op_kind::append, seq);
  for (std::size_t i = 0; i < n; ++i) o.k.data.push_back(start + double(i)), o.v.data.push_back(-start - double(i));
  o.k.shape = {n, 1}, o.v.shape = {n, 1};
  return o;
}
}  // namespace

TEST(PagedModel, HandlesCountCreatesAndForksIncludingRefusedOnes) {
  kv::paged_model m(pool(4, 2), {});
  m.apply(seq_op(kv::op_kind::create));                          // handle 0
  EXPECT_FALSE(m.apply(seq_op(kv::op_kind::fork, 5)).accepted);  // handle 1, names nothing
  EXPECT_TRUE(m.apply(seq_op(kv::op_kind::fork, 0)).accepted);   // handle 2
  EXPECT_EQ(m.live(), (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(m.handles(), 3);
  const auto s = m.observe();
  ASSERT_EQ(s.streams.size(), 2u);
  EXPECT_EQ(s.streams[1].name, "seq 2");
}

TEST(PagedModel, RefusalsNameEveryReasonThatApplies) {
  kv::paged_model m(pool(1, 2), {});
  m.apply(seq_op(kv::op_kind::create));
  kv::op bad = append(1, 1);
  bad.k.shape = {1, 1, 1};
  EXPECT_EQ(m.apply(bad).reasons, kv::refuse_index | kv::refuse_shape);
  EXPECT_EQ(m.apply(append(0, 3)).reasons, kv::refuse_capacity);
  kv::op decode = seq_op(kv::op_kind::decode, 0);
  decode.q = kv::tensor::vector({1, 2});
  EXPECT_EQ(m.apply(decode).reasons, kv::refuse_shape | kv::refuse_empty);
  EXPECT_EQ(m.apply(seq_op(kv::op_kind::release, 1)).reasons, kv::refuse_index);
  EXPECT_EQ(m.size(0), 0u);
}

TEST(PagedModel, ExactFillAndCopyOnWriteAtBlockGranularity) {
  kv::paged_model m(pool(3, 2), {});
  m.apply(seq_op(kv::op_kind::create));
  m.apply(append(0, 1));
  EXPECT_EQ(m.room(0), 5u);
  m.apply(seq_op(kv::op_kind::fork, 0));
  EXPECT_EQ(m.room(1), 3u);  // the shared, partly filled block must be copied first
  m.apply(append(1, 1, 7));
  auto s = m.observe();
  EXPECT_NE(s.streams[0].blocks, s.streams[1].blocks);
  EXPECT_EQ(s.streams[1].keys, (std::vector<double>{0, 7}));
  EXPECT_EQ(counter(s, "free_blocks"), 1);
  EXPECT_EQ(counter(s, "bytes_in_use"), 2 * 2 * 2 * 8);
  EXPECT_TRUE(m.apply(append(1, 2)).accepted);  // exactly the last free slot
  EXPECT_FALSE(m.apply(append(0, 2)).accepted);
}

TEST(PagedModel, ForkSharesAndReleaseReturnsOnlyUnsharedBlocks) {
  kv::paged_model m(pool(4, 1), {});
  m.apply(seq_op(kv::op_kind::create));
  m.apply(append(0, 2));
  m.apply(seq_op(kv::op_kind::fork, 0));
  auto s = m.observe();
  EXPECT_EQ(s.streams[0].blocks, s.streams[1].blocks);
  EXPECT_EQ(s.block_refs, (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 2}, {1, 2}}));
  m.apply(seq_op(kv::op_kind::release, 0));
  EXPECT_EQ(counter(m.observe(), "free_blocks"), 2);
  m.apply(seq_op(kv::op_kind::release, 1));
  EXPECT_EQ(counter(m.observe(), "free_blocks"), 4);
  EXPECT_TRUE(m.observe().block_refs.empty());
}

TEST(PagedModel, PreemptionReleasesTheNewestOthersInOrderUntilItFits) {
  kv::paged_model m(pool(4, 1, /*preempt=*/true), {});
  for (int h = 0; h < 4; ++h) m.apply(seq_op(kv::op_kind::create)), m.apply(append(h, 1));
  const auto e = m.apply(append(2, 2));
  EXPECT_TRUE(e.accepted);
  EXPECT_EQ(e.preempted, (std::vector<std::int64_t>{3, 1}));
  EXPECT_EQ(m.live(), (std::vector<std::int64_t>{0, 2}));
}

TEST(PagedModel, PreemptionThatCannotMakeRoomRefusesWithNoVictims) {
  kv::paged_model m(pool(2, 1, /*preempt=*/true), {});
  m.apply(seq_op(kv::op_kind::create));
  m.apply(seq_op(kv::op_kind::create));
  m.apply(append(1, 1));
  const auto e = m.apply(append(0, 3));
  EXPECT_FALSE(e.accepted);
  EXPECT_TRUE(e.preempted.empty());
  EXPECT_EQ(m.live(), (std::vector<std::int64_t>{0, 1}));
}
