// Unit tests of the radix model: lookups hold nothing, admits match again and lock before they allocate, retract.
#include <gtest/gtest.h>

#include "oracle/models/radix_model.h"
#include "oracle/models/tests/block_pool_test.h"

namespace kv = kvconform;

namespace {
using kv::model_tests::counter;
kv::cache_config config(std::size_t blocks, std::size_t page) {
  return kv::model_tests::pool_config(kv::cache_kind::radix, blocks, page);
}
kv::op lookup(std::vector<std::int64_t> tokens) { return {.kind = kv::op_kind::lookup, .tokens = std::move(tokens)}; }
kv::op admit(std::int64_t seq, std::int64_t count) { return {.kind = kv::op_kind::admit, .seq = seq, .count = count}; }
kv::op append(std::int64_t seq, std::vector<std::int64_t> tokens) {
  kv::op o{.kind = kv::op_kind::append, .seq = seq, .tokens = tokens};
  o.k.shape = o.v.shape = {tokens.size(), 1};
  for (std::int64_t t : tokens) o.k.data.push_back(double(t)), o.v.data.push_back(double(-t));
  return o;
}
kv::op on(kv::op_kind kind, std::int64_t seq) { return {.kind = kind, .seq = seq}; }
}  // namespace

TEST(RadixModel, APageIsFoundOnlyOnceItsRowsAreWritten) {
  kv::radix_model m(config(4, 2), {});
  m.apply(lookup({1, 2, 3, 4}));
  ASSERT_TRUE(m.apply(admit(0, 4)).accepted);
  m.apply(lookup({1, 2, 3, 4}));
  ASSERT_TRUE(m.apply(admit(1, 0)).accepted);
  EXPECT_EQ(m.size(1), 0u);  // 0's pages are taken, not written
  m.apply(append(0, {1, 2}));
  m.apply(lookup({1, 2, 3, 4}));
  ASSERT_TRUE(m.apply(admit(2, 0)).accepted);
  EXPECT_EQ(m.size(2), 2u);
  EXPECT_EQ(counter(m.observe(), "protected_blocks"), 1);
}

TEST(RadixModel, AnAdmitLocksItsHitBeforeItAllocatesAndFindsLessWhenTheLookupsHitWasEvicted) {
  kv::radix_model m(config(2, 1), {});
  m.apply(lookup({})), m.apply(admit(0, 0)), m.apply(append(0, {5, 6})), m.apply(on(kv::op_kind::release, 0));
  m.apply(lookup({5, 6}));  // finds both, holds neither
  m.apply(lookup({}));
  ASSERT_TRUE(m.apply(admit(2, 2)).accepted);  // evicts them
  ASSERT_TRUE(m.apply(admit(1, 0)).accepted);
  EXPECT_TRUE(m.last().hit_lost);
  EXPECT_EQ(m.size(1), 0u);
  m.apply(on(kv::op_kind::abort, 2));
  m.apply(lookup({}));
  EXPECT_FALSE(m.apply(admit(3, 3)).accepted);  // two pages in all
}

TEST(RadixModel, AWaitingSequenceRunsNothingAndARetractMakesARunningOneWait) {
  kv::radix_model m(config(4, 2), {});
  m.apply(lookup({1, 2, 3}));
  EXPECT_EQ(m.apply(append(0, {1})).reasons, kv::refuse_index);
  EXPECT_FALSE(m.apply(on(kv::op_kind::retract, 0)).accepted);
  m.apply(admit(0, 3)), m.apply(append(0, {1, 2}));
  EXPECT_TRUE(m.apply(on(kv::op_kind::retract, 0)).accepted);
  EXPECT_TRUE(m.last().retract_mid_prefill);
  EXPECT_EQ(m.prompt(0), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(counter(m.observe(), "evictable_blocks"), 1);
  EXPECT_EQ(counter(m.observe(), "free_blocks"), 3);
  ASSERT_TRUE(m.apply(admit(0, 1)).accepted);
  EXPECT_EQ(m.size(0), 2u);
}
