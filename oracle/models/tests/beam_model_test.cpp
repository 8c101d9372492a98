// Unit tests of the beam model: outcomes and their reasons, truncation, gathers, decode problems, memory counters.
#include <gtest/gtest.h>

#include "oracle/models/beam_model.h"

namespace kv = kvconform;

namespace {
kv::cache_config config(std::size_t layers, std::size_t batch, std::size_t heads, std::size_t q_heads, std::size_t cap,
                        std::size_t d) {
  kv::cache_config c{kv::cache_kind::beam, cap, d, d};
  c.layers = layers, c.batch = batch, c.heads = heads, c.q_heads = q_heads;
  return c;
}
/// An update whose entry (b, h, t, j) is base + 100 b + 10 h + t (+ j / 4).
kv::op update(const kv::cache_config& c, std::int64_t layer, std::int64_t start, std::size_t n, double base = 0) {
  kv::op o{.kind = kv::op_kind::update, .layer = layer, .start = start};
  for (std::size_t b = 0; b < c.batch; ++b)
    for (std::size_t h = 0; h < c.heads; ++h)
      for (std::size_t t = 0; t < n; ++t)
        for (std::size_t j = 0; j < c.d_k; ++j)
          o.k.data.push_back(base + 100.0 * b + 10.0 * h + double(t) + double(j) / 4);
  o.v = o.k;
  o.k.shape = o.v.shape = {c.batch, c.heads, n, c.d_k};
  return o;
}
std::vector<double> keys(const kv::snapshot& s, std::size_t stream) { return s.streams[stream].keys.copy(); }
}  // namespace

TEST(BeamModel, UpdatesTruncateAndLayersKeepTheirOwnLengths) {
  const auto c = config(2, 1, 1, 1, 4, 1);
  kv::beam_model m(c, {});
  EXPECT_TRUE(m.apply(update(c, 0, 0, 3)).accepted);
  EXPECT_TRUE(m.apply(update(c, 0, 1, 1, 50)).accepted);
  EXPECT_EQ(m.length(0), 2u);
  EXPECT_EQ(m.length(1), 0u);
  const auto s = m.observe();
  EXPECT_EQ(s.streams[0].name, "layer 0 row 0 head 0");
  EXPECT_EQ(keys(s, 0), (std::vector<double>{0, 50}));
  EXPECT_EQ(s.counters[0], (std::pair<std::string, std::int64_t>{"layer 0 length", 2}));
}

TEST(BeamModel, RefusalsNameEveryReasonThatApplies) {
  const auto c = config(1, 2, 1, 1, 3, 1);
  kv::beam_model m(c, {});
  m.apply(update(c, 0, 0, 1));
  EXPECT_EQ(m.apply(update(c, 0, 2, 2)).reasons,
            kv::refuse_index | kv::refuse_capacity);  // beyond the length and past T
  EXPECT_EQ(m.apply(update(c, 0, 1, 3)).reasons, kv::refuse_capacity);
  EXPECT_EQ(m.apply(update(c, 1, 0, 1)).reasons, kv::refuse_index);
  kv::op mismatch = update(c, 0, 1, 1);
  mismatch.v.shape[2] = 2, mismatch.v.data.resize(4);
  EXPECT_EQ(m.apply(mismatch).reasons, kv::refuse_shape);
  EXPECT_EQ(m.apply({.kind = kv::op_kind::reorder, .index = {0, 2}}).reasons, kv::refuse_index);
  EXPECT_EQ(m.apply({.kind = kv::op_kind::reorder, .index = {0, 0, 0}}).reasons, kv::refuse_shape);
  EXPECT_EQ(m.length(0), 1u);
}

TEST(BeamModel, ReorderIsAGatherWithRepeatsAndDrops) {
  const auto c = config(2, 3, 1, 1, 2, 1);
  kv::beam_model m(c, {});
  m.apply(update(c, 0, 0, 1));
  m.apply(update(c, 1, 0, 1, 7));
  EXPECT_TRUE(m.apply({.kind = kv::op_kind::reorder, .index = {2, 2, 0}}).accepted);
  const auto s = m.observe();  // streams (layer, row, head) in row-major order
  EXPECT_EQ(keys(s, 0), (std::vector<double>{200}));
  EXPECT_EQ(keys(s, 1), (std::vector<double>{200}));
  EXPECT_EQ(keys(s, 2), (std::vector<double>{0}));
  EXPECT_EQ(keys(s, 3), (std::vector<double>{207}));
}

TEST(BeamModel, DecodeHasOneProblemPerRowAndQueryHeadWithItsKvHeadAndMask) {
  const auto c = config(1, 2, 2, 4, 3, 1);
  kv::beam_model m(c, {});
  m.apply(update(c, 0, 0, 2));
  kv::op d{.kind = kv::op_kind::decode,
           .q = {{2, 4, 1}, {0, 1, 2, 3, 4, 5, 6, 7}},
           .layer = 0,
           .mask = {{2, 2}, {0, 1, 1, 1}}};
  const auto e = m.apply(d);
  ASSERT_TRUE(e.accepted);
  ASSERT_EQ(e.problems.size(), 8u);
  EXPECT_EQ(e.problems[2].keys, (std::vector<double>{10, 11}));    // row 0, query head 2 reads kv head 1
  EXPECT_EQ(e.problems[5].keys, (std::vector<double>{100, 101}));  // row 1, query head 1 reads kv head 0
  EXPECT_EQ(e.problems[5].q, (std::vector<double>{5}));
  EXPECT_EQ(e.problems[0].live, (std::vector<unsigned char>{0, 1}));
  EXPECT_EQ(e.problems[4].live, (std::vector<unsigned char>{1, 1}));
  d.mask.shape = {2, 3}, d.mask.data.resize(6);
  EXPECT_EQ(m.apply(d).reasons, kv::refuse_shape);
  d.mask = {}, d.layer = 0, d.q.shape = {2, 3, 1}, d.q.data.resize(6);
  EXPECT_EQ(m.apply(d).reasons, kv::refuse_shape);  // 3 query heads over 2 kv heads
}

TEST(BeamModel, StorageRoundingAndMemoryCountersFollowTheProfile) {
  kv::numeric_profile f32;
  f32.storage = kv::precision::f32;
  const auto c = config(2, 3, 2, 2, 5, 4);
  kv::beam_model m(c, f32);
  kv::op o = update(c, 1, 0, 1);
  o.k.data[0] = 0.1;
  m.apply(o);
  const auto s = m.observe();
  EXPECT_EQ(s.streams[6].keys[0], double(0.1f));  // layer 1, row 0, head 0
  auto counter = [&](const std::string& name) {
    for (const auto& [n, v] : s.counters)
      if (n == name) return v;
    return std::int64_t{-1};
  };
  EXPECT_EQ(counter("bytes"), 2 * 2 * 3 * 2 * 5 * 4 * 4);
  EXPECT_EQ(counter("bytes_per_token"), 2 * 2 * 2 * 4 * 4);
  EXPECT_EQ(counter("max_batch_tokens"), (1 << 20) / 128);
}

TEST(BeamModel, PrefillAppendsAndPosesOneCausalProblemPerRowQueryHeadAndPosition) {
  const auto c = config(1, 2, 1, 2, 4, 1);
  kv::beam_model m(c, {});
  m.apply(update(c, 0, 0, 1));
  kv::op p = update(c, 0, 0, 2, 5);
  p.kind = kv::op_kind::prefill;
  p.q = {{2, 2, 2, 1}, {0, 1, 2, 3, 4, 5, 6, 7}};
  p.mask = {{2, 3}, {1, 1, 1, 0, 1, 1}};
  const auto e = m.apply(p);
  ASSERT_TRUE(e.accepted);
  EXPECT_EQ(m.length(0), 3u);
  EXPECT_EQ(keys(m.observe(), 1), (std::vector<double>{100, 105, 106}));
  ASSERT_EQ(e.problems.size(), 8u);  // (b, h, i)
  EXPECT_EQ(e.problems[5].keys, (std::vector<double>{100, 105, 106}));
  EXPECT_EQ(e.problems[5].q, (std::vector<double>{5}));
  EXPECT_EQ(e.problems[0].live, (std::vector<unsigned char>{1, 1, 0}));  // query 0 at position 1
  EXPECT_TRUE(e.problems[1].live.empty());                               // query 1 sees all three
  EXPECT_EQ(e.problems[7].live, (std::vector<unsigned char>{0, 1, 1}));  // row 1's mask hides position 0
  EXPECT_EQ(e.streams, (std::vector<std::size_t>{0, 0, 0, 0, 1, 1, 1, 1}));
}

TEST(BeamModel, PrefillIsRefusedAsItsUpdateOrForItsQueriesAndMask) {
  const auto c = config(2, 1, 2, 2, 3, 1);
  kv::beam_model m(c, {});
  kv::op p = update(c, 0, 0, 2);
  p.kind = kv::op_kind::prefill;
  p.q = {{1, 2, 2, 1}, {0, 1, 2, 3}};
  kv::op wrong = p;
  wrong.q.shape = {1, 2, 1, 2};  // one query of width 2
  EXPECT_EQ(m.apply(wrong).reasons, kv::refuse_shape);
  wrong = p, wrong.q.shape = {1, 1, 4, 1};  // one query head over two kv heads
  EXPECT_EQ(m.apply(wrong).reasons, kv::refuse_shape);
  wrong = p, wrong.mask = {{1, 0}, {}};  // the layer's length, without the chunk's
  EXPECT_EQ(m.apply(wrong).reasons, kv::refuse_shape);
  wrong = p, wrong.layer = 2;
  EXPECT_EQ(m.apply(wrong).reasons, kv::refuse_index);
  EXPECT_TRUE(m.apply(p).accepted);
  EXPECT_EQ(m.apply(p).reasons, kv::refuse_capacity);  // 2 + 2 > 3
  kv::op none = update(c, 1, 0, 0);
  none.kind = kv::op_kind::prefill, none.q = {{1, 2, 0, 1}, {}};
  const auto e = m.apply(none);
  EXPECT_TRUE(e.accepted && e.problems.empty());
  EXPECT_EQ(m.length(0), 2u);
  EXPECT_EQ(m.length(1), 0u);
}
