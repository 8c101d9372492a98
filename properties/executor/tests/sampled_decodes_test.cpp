// Sampled decode checks (docs/design.md §4.4): the first and the last decode are always judged, others by sample.
#include <gtest/gtest.h>

#include "impls/flat/flat.h"
#include "properties/executor/executor.h"
#include "properties/kinds/flat/adapter.h"

namespace kv = kvconform;

namespace {
/// Decodes right except when it holds exactly `wrong_at` rows: then the output is off by one.
template <std::size_t wrong_at>
struct wrong_once : kv::flat {
  using basic_flat::basic_flat;
};
template <std::size_t wrong_at>
kv::decode_result decode_step(kv::array_view q, const wrong_once<wrong_at>& c) {
  kv::decode_result r = kv::decode_step(q, static_cast<const kv::flat&>(c));
  if (c.size() == wrong_at) r.output[0] += 1;
  return r;
}

/// Eight appends of one row, each followed by a decode (ops 1, 3, .., 15 decode over 1 .. 8 rows).
std::vector<kv::op> eight_decodes() {
  std::vector<kv::op> ops;
  for (int i = 0; i < 8; ++i) {
    const double x = 0.25 * i;
    ops.push_back({.kind = kv::op_kind::append, .k = kv::tensor::vector({x, 1 - x}), .v = kv::tensor::vector({x, 2})});
    ops.push_back({.kind = kv::op_kind::decode, .q = kv::tensor::vector({1, 0.5})});
  }
  return ops;
}

/// Runs the ops with sampling by `seed` (none when nullopt): the failure, if any, after finish_decodes.
template <class C>
std::optional<kv::failure> run(std::optional<std::uint64_t> seed) {
  const auto impl = kv::make_implementation<C>({"under-test"});
  kv::session s({kv::cache_kind::flat, 8, 2, 2}, impl);
  if (seed) s.sample_decodes(*seed);
  for (const kv::op& o : eight_decodes())
    if (!s.step(o)) break;
  s.finish_decodes();
  EXPECT_EQ(s.stats().decodes, s.failed() ? s.failed()->op_index / 2 + 1 : 8u);
  return s.failed();
}
}  // namespace

TEST(SampledDecodes, AWrongMiddleDecodeIsCaughtOnSomeSamplesAndMissedOnOthers) {
  const auto all = run<wrong_once<5>>(std::nullopt);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->check, "decode-bound");
  EXPECT_EQ(all->op_index, 9u);
  int caught = 0;
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    const auto f = run<wrong_once<5>>(seed);
    if (!f) continue;
    EXPECT_EQ(f->op_index, 9u);
    ++caught;
  }
  EXPECT_GT(caught, 4);   // about one seed in four judges it
  EXPECT_LT(caught, 40);  // the others leave it to the shape check
}

TEST(SampledDecodes, TheFirstAndTheLastDecodeAreAlwaysJudged) {
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    const auto first = run<wrong_once<1>>(seed);
    ASSERT_TRUE(first) << seed;
    EXPECT_EQ(first->op_index, 1u);
    const auto last = run<wrong_once<8>>(seed);
    ASSERT_TRUE(last) << seed;
    EXPECT_EQ(last->op_index, 15u);
    EXPECT_EQ(last->op_name, "decode");
    EXPECT_EQ(last->check, "decode-bound");
  }
  EXPECT_FALSE(run<kv::flat>(7));
}
