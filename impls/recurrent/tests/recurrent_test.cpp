// Unit tests of the recurrent reference: draft rollback, checkpoints after acceptance, resuming (the shortest hit over
// the state and the attention layers), refusals.
#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "impls/recurrent/recurrent.h"
#include "oracle/models/recurrent_model.h"
#include "properties/executor/executor.h"
#include "properties/kinds/recurrent/parts.h"
#include "properties/runners/builtin.h"

namespace kv = kvconform;

namespace {
constexpr std::size_t dk = 2, dv = 3, width = 3, block = 2, channels = 2 * dk + dv, layers = 1;

/// n steps of inputs that differ per step and per seed.
struct steps {
  std::vector<double> x, g, beta, k, v;
  std::vector<std::int64_t> tokens;
  steps(std::size_t n, int seed) {
    for (std::size_t t = 0; t < n; ++t) {
      for (std::size_t c = 0; c < channels; ++c) x.push_back(0.25 * double((seed * 7 + int(t) * 3 + int(c)) % 9) - 1);
      for (std::size_t c = 0; c < dk; ++c) k.push_back(double(seed * 10 + int(t)));
      for (std::size_t c = 0; c < dv; ++c) v.push_back(-double(seed * 10 + int(t)));
      g.push_back(-0.125 * double((seed + int(t)) % 4));
      beta.push_back(0.5);
      tokens.push_back((seed + int(t)) % 3);
    }
  }
  kv::array_view xv() const { return {x.data(), {g.size(), channels}}; }
  kv::array_view gv() const { return {g.data(), {g.size()}}; }
  /// The write strengths for the delta rule; none for the decay form.
  kv::array_view bv(bool delta = true) const {
    return delta ? kv::array_view{beta.data(), {beta.size()}} : kv::array_view{nullptr, {0}};
  }
  kv::array_view kv_() const { return {k.data(), {layers, g.size(), dk}}; }
  kv::array_view vv() const { return {v.data(), {layers, g.size(), dv}}; }
  std::span<const std::int64_t> tv() const { return tokens; }
};

kv::recurrent make(bool delta, std::size_t slots = 4) {
  return kv::recurrent(slots, block, dk, dv, width, delta, layers);
}
}  // namespace

TEST(RecurrentReference, RollbackLeavesTheStateOfTheAcceptedStepsBitForBit) {
  for (bool delta : {false, true}) {
    const steps s(4, 1), accepted(2, 1);
    auto a = make(delta), b = make(delta);
    const auto ha = a.create({}), hb = b.create({});
    a.append(ha, s.xv(), s.gv(), s.bv(delta), s.kv_(), s.vv(), s.tv());
    a.rollback(ha, 2);
    b.append(hb, accepted.xv(), accepted.gv(), accepted.bv(delta), accepted.kv_(), accepted.vv(), accepted.tv());
    EXPECT_EQ(a.state(ha), b.state(hb));
    EXPECT_EQ(a.window(ha), b.window(hb));
    EXPECT_EQ(a.keys(ha), b.keys(hb));  // the attention layer's rows at the same accepted length
    EXPECT_EQ(a.values(ha), b.values(hb));
    EXPECT_EQ(a.length(ha), 2u);
    EXPECT_THROW(a.rollback(ha, 3), kv::index_error);  // two steps are left to drop, not three
    EXPECT_EQ(a.state(ha), b.state(hb));
  }
}

TEST(RecurrentReference, CheckpointsArePublishedOnceTheirStepsAreKept) {
  auto c = make(true);
  const steps first(3, 2), next(1, 3);
  const auto h = c.create({});
  // Crosses the boundary at 2: not kept yet.
  c.append(h, first.xv(), first.gv(), first.bv(), first.kv_(), first.vv(), first.tv());
  int held = 0;
  c.for_each_checkpoint([&](const auto&, const auto&, const auto&) { ++held; });
  EXPECT_EQ(held, 0);
  c.append(h, next.xv(), next.gv(), next.bv(), next.kv_(), next.vv(), next.tv());  // keeps the first append for good
  std::vector<double> at_boundary;
  c.for_each_checkpoint([&](const auto& chain, const auto& state, const auto&) {
    EXPECT_EQ(chain, (std::vector<std::int64_t>(first.tokens.begin(), first.tokens.begin() + block)));
    at_boundary = state;
  });
  ASSERT_FALSE(at_boundary.empty());
  const auto resumed = c.create(first.tokens);  // three tokens: the checkpoint of the first two
  EXPECT_EQ(c.length(resumed), block);
  EXPECT_EQ(c.state(resumed), at_boundary);
  EXPECT_EQ(c.hit_tokens(), block);
}

TEST(RecurrentReference, RefusedAppendsChangeNothing) {
  auto c = make(false);
  const steps s(2, 4);
  const auto h = c.create({});
  c.append(h, s.xv(), s.gv(), kv::array_view{nullptr, {0}}, s.kv_(), s.vv(), s.tv());
  const auto before = c.state(h);
  std::vector<double> growing = s.g;
  growing[1] = 0.5;
  EXPECT_THROW(
      c.append(h, s.xv(), kv::array_view{growing.data(), {2}}, kv::array_view{nullptr, {0}}, s.kv_(), s.vv(), s.tv()),
      kv::shape_error);
  // Beta given to the decay form.
  EXPECT_THROW(c.append(h, s.xv(), s.gv(), s.bv(), s.kv_(), s.vv(), s.tv()), kv::shape_error);
  EXPECT_THROW(c.append(h + 1, s.xv(), s.gv(), kv::array_view{nullptr, {0}}, s.kv_(), s.vv(), s.tv()), kv::index_error);
  const std::vector<double> extra_layer(2 * s.k.size());
  EXPECT_THROW(c.append(h, s.xv(), s.gv(), kv::array_view{nullptr, {0}}, kv::array_view{extra_layer.data(), {2, 2, dk}},
                        s.vv(), s.tv()),
               kv::shape_error);  // the rows of a second attention layer, in a cache with one
  EXPECT_EQ(c.state(h), before);
  EXPECT_EQ(c.length(h), 2u);
  EXPECT_EQ(c.keys(h), s.k);
}

// vLLM's hybrid rule (PR #46281, #43090): a create resumes only as far as the state's checkpoint and every attention
// block below it are both held; the rows it holds are the blocks' and its length agrees with them.
TEST(RecurrentReference, AHitIsTheShortestOverTheStateAndTheAttentionBlocks) {
  auto c = make(true, 5);
  const steps s(4, 5), next(1, 6);
  const auto h = c.create({});
  c.append(h, s.xv(), s.gv(), s.bv(), s.kv_(), s.vv(), s.tv());
  c.release(h);  // publishes, in order: block 2, checkpoint 2, block 4, checkpoint 4
  auto whole = c.create(s.tokens);
  EXPECT_EQ(c.length(whole), 4u);
  EXPECT_EQ(c.keys(whole), s.k);
  EXPECT_EQ(c.values(whole), s.v);
  c.release(whole);
  c.evict(2);  // the least recently used: checkpoint 2 (never resumed from), then block 2 (the hit touched it first)
  int blocks = 0;
  c.for_each_block([&](const auto&, const auto&, const auto&) { ++blocks; });
  EXPECT_EQ(blocks, 1);
  const auto cut = c.create(s.tokens);  // checkpoints 2 and 4 held, block 2 not: no hit
  EXPECT_EQ(c.length(cut), 0u);
  EXPECT_TRUE(c.keys(cut).empty());
  EXPECT_EQ(c.hit_tokens(), 4u);
  c.append(cut, next.xv(), next.gv(), next.bv(), next.kv_(), next.vv(), next.tv());
  EXPECT_EQ(c.keys(cut).size(), dk);
}

// The references and the model agree through the executor on generated draft rounds and resumed prefixes, each
// reference within its declared precision.
TEST(RecurrentReference, PassesTheModelOnARoundTrip) {
  for (const char* name : {"recurrent", "recurrent-f32"}) {
    const kv::implementation* impl = kv::find_implementation(name);
    ASSERT_NE(impl, nullptr);
    kv::trace t;
    t.config = {kv::cache_kind::recurrent, 2, dk, dv};
    t.config.block_size = block, t.config.conv_width = width, t.config.delta = true, t.config.layers = layers;
    t.ops.push_back({.kind = kv::op_kind::create});
    t.ops.push_back(kv::kinds::recurrent_append(t.config, 0, {1, 2, 3, 1, 2}, 7, 0));
    t.ops.push_back({.kind = kv::op_kind::rollback, .seq = 0, .count = 2});
    t.ops.push_back(kv::kinds::recurrent_append(t.config, 0, {0}, 8, 1));
    t.ops.push_back({.kind = kv::op_kind::create, .tokens = {1, 2, 3, 0}});
    t.ops.push_back(kv::kinds::recurrent_append(t.config, 1, {0, 0, 0}, 9, 2));
    const kv::verdict v = kv::run_trace(t, *impl);
    EXPECT_TRUE(v.ok()) << name << ": " << (v.fail ? v.fail->message : "");
    EXPECT_EQ(v.stats.numeric, 3u) << name;  // the three appends' outputs, judged
  }
}
