// Unit tests of the recurrent model: what it accepts and refuses, what it publishes and when, what a create resumes.
#include <gtest/gtest.h>

#include "oracle/models/recurrent_model.h"
#include "properties/kinds/recurrent/parts.h"

namespace kv = kvconform;

namespace {
kv::cache_config config(std::size_t capacity = 2) {
  kv::cache_config c{kv::cache_kind::recurrent, capacity, 2, 2};
  c.block_size = 2, c.conv_width = 2;
  return c;
}
kv::op rollback(std::int64_t seq, std::int64_t count) {
  return {.kind = kv::op_kind::rollback, .seq = seq, .count = count};
}
}  // namespace

TEST(RecurrentModel, RefusesMalformedStepsAndRollbacksPastTheLastAppend) {
  kv::recurrent_model m(config(), {}, {});
  EXPECT_TRUE(m.apply({.kind = kv::op_kind::create}).accepted);
  kv::op a = kv::kinds::recurrent_append(config(), 0, {1, 2, 3}, 1, 0);
  const kv::expectation e = m.apply(a);
  EXPECT_TRUE(e.accepted);
  EXPECT_EQ(e.output.size(), 6u);  // three steps of d_v = 2, each with its bound
  EXPECT_EQ(e.output_bound.size(), 6u);
  EXPECT_FALSE(m.apply(rollback(0, 4)).accepted);
  EXPECT_EQ(m.apply(rollback(0, 4)).reasons, kv::refuse_index);
  kv::op growing = a;
  growing.g.data[0] = 0.5;
  EXPECT_EQ(m.apply(growing).reasons, kv::refuse_shape);
  kv::op beta = a;
  beta.beta = kv::tensor::vector({0.5, 0.5, 0.5});  // the decay form takes no write strength
  EXPECT_EQ(m.apply(beta).reasons, kv::refuse_shape);
  EXPECT_EQ(m.length(0), 3u);
  EXPECT_EQ(m.droppable(0), 3u);
}

TEST(RecurrentModel, PublishesOnceKeptAndResumesTheLongestHeldPrefix) {
  kv::recurrent_model m(config(), {}, {});
  m.apply({.kind = kv::op_kind::create});
  m.apply(kv::kinds::recurrent_append(config(), 0, {1, 2, 3, 1, 2}, 1, 0));  // crosses 2 and 4
  EXPECT_EQ(m.checkpoints(), 0u);
  m.apply(rollback(0, 2));                                                  // drops the steps past 3
  m.apply(kv::kinds::recurrent_append(config(), 0, {0}, 2, 0));             // keeps the first three
  EXPECT_EQ(m.chains(), (std::vector<std::vector<std::int64_t>>{{1, 2}}));  // the boundary at 4 was dropped
  EXPECT_EQ(m.hit_of({1, 2, 3}), 2u);
  EXPECT_EQ(m.hit_of({1, 3}), 0u);
  kv::recurrent_model limited(config(), {}, [] {
    kv::policy_set p;
    p.declare("hit_limit", "all_but_last");
    return p;
  }());
  limited.apply({.kind = kv::op_kind::create});
  limited.apply(kv::kinds::recurrent_append(config(), 0, {1, 2}, 1, 0));
  limited.apply({.kind = kv::op_kind::release, .seq = 0});  // a release keeps the steps too
  EXPECT_EQ(limited.hit_of({1, 2}), 0u);                    // all but the last token: one, no whole block
  EXPECT_EQ(limited.hit_of({1, 2, 0}), 2u);
}

TEST(RecurrentModel, EvictsTheLeastRecentlyUsedCheckpoint) {
  kv::recurrent_model m(config(2), {}, {});
  auto cache = [&](std::int64_t h, std::int64_t token) {  // a chain of one block, computed and released
    m.apply({.kind = kv::op_kind::create});
    m.apply(kv::kinds::recurrent_append(config(), h, {token, token}, 1, 0));
    m.apply({.kind = kv::op_kind::release, .seq = h});
  };
  cache(0, 0), cache(1, 1);
  m.apply({.kind = kv::op_kind::create, .tokens = {0, 0}});  // handle 2 resumes {0, 0}: now the most recent
  cache(3, 2);                                               // a third chain evicts {1, 1}
  EXPECT_EQ(m.chains(), (std::vector<std::vector<std::int64_t>>{{0, 0}, {2, 2}}));
  EXPECT_TRUE(m.apply({.kind = kv::op_kind::evict, .count = 5}).accepted);
  EXPECT_EQ(m.checkpoints(), 0u);
  EXPECT_FALSE(m.apply({.kind = kv::op_kind::evict, .count = -1}).accepted);
}

// With an attention layer the pool holds blocks of its rows beside the checkpoints; a hit needs both (vLLM's hybrid
// rule), a rollback drops the rows with the steps, and a refused append changes neither.
TEST(RecurrentModel, AHitNeedsTheCheckpointAndEveryAttentionBlockBelowIt) {
  kv::cache_config c = config(4);
  c.layers = 1;
  kv::recurrent_model m(c, {}, {});
  m.apply({.kind = kv::op_kind::create});
  const kv::op a = kv::kinds::recurrent_append(c, 0, {1, 2, 3, 1}, 1, 0);
  ASSERT_EQ(a.k.shape, (std::vector<std::size_t>{1, 4, 2}));
  kv::op wrong = a;
  wrong.k.shape[0] = 2, wrong.k.data.resize(16);
  EXPECT_EQ(m.apply(wrong).reasons, kv::refuse_shape);
  EXPECT_TRUE(m.apply(a).accepted);
  m.apply(rollback(0, 1));
  EXPECT_EQ(m.observe().streams.at(2).keys.size(), 6u);  // seq 0 rows: three steps of d_k = 2
  m.apply({.kind = kv::op_kind::release, .seq = 0});     // block 2, then checkpoint 2 (the boundary at 4 was dropped)
  EXPECT_EQ(m.blocks(), 1u);
  EXPECT_EQ(m.hit_of({1, 2, 3}), 2u);
  m.apply({.kind = kv::op_kind::evict, .count = 1});  // the older: the block
  EXPECT_EQ(m.blocks(), 0u);
  EXPECT_EQ(m.checkpoints(), 1u);
  EXPECT_EQ(m.hit_of({1, 2, 3}), 0u);  // the checkpoint alone is not a hit
  m.apply({.kind = kv::op_kind::create, .tokens = {1, 2, 3}});
  EXPECT_TRUE(m.last().short_of_blocks);
  EXPECT_EQ(m.length(1), 0u);
}
