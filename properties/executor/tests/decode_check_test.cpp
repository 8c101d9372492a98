// check_decode judges with the double-double oracle as float128 would, and hands float128 what it must.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "impls/flat/flat.h"
#include "properties/executor/decode_check.h"
#include "properties/generate/input_classes.h"

namespace kv = kvconform;

namespace {
kv::attention_problem from_class(kv::input_class c, std::size_t n, std::size_t d, unsigned seed) {
  const kv::row_source src(c, d, d, seed);
  kv::attention_problem p;
  p.n = n, p.d_k = p.d_v = d;
  std::vector<double> keys, values;
  src.rows(0, n, seed + 1, keys, values);
  p.keys = std::move(keys), p.values = std::move(values);
  p.q = src.query();
  return p;
}

kv::decode_result reference_decode(const kv::attention_problem& p) {
  kv::flat cache(p.n, p.d_k, p.d_v);
  cache.append(kv::array_view(p.keys.data(), {p.n, p.d_k}), kv::array_view(p.values.data(), {p.n, p.d_v}));
  return kv::decode_step(kv::array_view(p.q.data(), {p.d_k}), cache);
}
}  // namespace

// The gate's verdicts and worst ratios do not depend on which oracle judged: the ratios agree to
// 1e-9 relative (the oracles differ by ~1e-28, the implementation's error is ~1e-17).
TEST(DecodeCheck, DoubleDoubleJudgesAsFloat128OnEveryInputClass) {
  unsigned seed = 0;
  for (const kv::input_class c : kv::all_input_classes())
    for (const auto& [n, d] : {std::pair<std::size_t, std::size_t>{1, 4}, {13, 16}, {200, 64}}) {
      const auto p = from_class(c, n, d, ++seed);
      const auto got = reference_decode(p);
      std::vector<double> off(got.output.data(), got.output.data() + d);
      off[0] += 1e-9 * (1 + std::fabs(off[0]));  // and one output a little wrong, so that some verdicts fail
      for (const auto* out : {got.output.data(), static_cast<const double*>(off.data())}) {
        const auto a = kv::check_decode(p, out, got.weights.data(), {}, kv::decode_oracle::double_double);
        const auto b = kv::check_decode(p, out, got.weights.data(), {}, kv::decode_oracle::float128);
        const std::string where = std::string(kv::to_string(c)) + " n " + std::to_string(n);
        EXPECT_EQ(a.check, b.check) << where;
        EXPECT_EQ(a.numeric, b.numeric) << where;
        EXPECT_NEAR(a.ratio, b.ratio, 1e-9 * b.ratio) << where;
      }
    }
}

TEST(DecodeCheck, Float128TakesOverWhereDoubleDoubleCannotResolveTheBound) {
  auto p = from_class(kv::input_class::moderate, 5, 4, 1);
  EXPECT_EQ(kv::oracle_for(p, {}), kv::decode_oracle::double_double);
  kv::numeric_profile no_ftz;
  no_ftz.flush_subnormals = false;  // the bound's floor is then one denorm_min
  EXPECT_EQ(kv::oracle_for(p, no_ftz), kv::decode_oracle::float128);
  p.values[7] = 0x1p1001;  // partial sums could overflow double's range
  EXPECT_EQ(kv::oracle_for(p, {}), kv::decode_oracle::float128);
  p.live = {1, 0, 1, 1, 1};  // ... unless that value belongs to a masked key
  EXPECT_EQ(kv::oracle_for(p, {}), kv::decode_oracle::double_double);
}

namespace {
/// A greedy loop's cache: six distinct prompt rows, then the last of them repeated (docs/numerics.md
/// §5.1); without `repeat` every row is drawn afresh.
kv::attention_problem greedy_loop(std::size_t n, std::size_t d, std::uint64_t seed, bool repeat) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  kv::attention_problem p;
  p.n = n, p.d_k = p.d_v = d;
  p.q.resize(d);
  for (double& x : p.q) x = 2 * g(rng);  // peaked, so the repeated row is rarely the max (p = 1 sums exactly)
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t from = repeat && i > 5 ? 5 : i;
    for (std::size_t j = 0; j < d; ++j) {
      p.keys.push_back(from == i ? g(rng) : p.keys[from * d + j]);
      p.values.push_back(from == i ? g(rng) : p.values[from * d + j]);
    }
  }
  return p;
}
double worst_ratio(bool repeat) {
  double worst = 0;
  for (const std::size_t n : {64, 128, 256})
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
      const auto p = greedy_loop(n, 4, seed, repeat);
      const auto got = reference_decode(p);
      const auto v = kv::check_decode(p, got.output.data(), got.weights.data(), {});
      EXPECT_EQ(v.check, "") << "n " << n << " seed " << seed << ": " << v.message;
      worst = std::max(worst, v.ratio);
    }
  return worst;
}
}  // namespace

// Identical rows make the roundings of the two sequential sums (normaliser and output) coherent,
// so they approach the worst case the bound's summation term charges; correct code then reaches
// about a quarter of the bound, never a half (docs/numerics.md §5.1). Distinct rows stay far below.
TEST(DecodeCheck, RepeatedRowsApproachTheSummationTermButStayBelowHalfTheBound) {
  const double repeated = worst_ratio(true), distinct = worst_ratio(false);
  EXPECT_GT(repeated, 0.15);
  EXPECT_LT(repeated, 0.5);
  EXPECT_LT(distinct, 0.1);
  EXPECT_GT(repeated, 2 * distinct);
  std::printf("worst err/bound: repeated rows %.3f, distinct rows %.3f\n", repeated, distinct);
}

namespace {
double worst_peaked_ratio(std::size_t d) {
  double worst = 0;
  for (const std::size_t n : {4, 16, 64})
    for (unsigned seed = 1; seed <= 200; ++seed) {
      const auto p = from_class(kv::input_class::peaked, n, d, seed);
      const auto got = reference_decode(p);
      const auto v = kv::check_decode(p, got.output.data(), got.weights.data(), {});
      EXPECT_EQ(v.check, "") << "d " << d << " n " << n << " seed " << seed << ": " << v.message;
      worst = std::max(worst, v.ratio);
    }
  return worst;
}
}  // namespace

// A far-from-the-max weight's error is that of its score, a few roundings of |s|, while the score's
// allowance gamma_{d+6} |q||k| is mostly the six fixed roundings when d is small: peaked queries use
// about a tenth of the bound at d = 2 or 3 and a hundredth at production head dims (docs/numerics.md §5.1).
TEST(DecodeCheck, FarWeightsUseMoreOfTheBoundAtSmallHeadDimsOnly) {
  const double small = std::max(worst_peaked_ratio(2), worst_peaked_ratio(3));
  const double wide = std::max(worst_peaked_ratio(64), worst_peaked_ratio(128));
  EXPECT_GT(small, 0.08);
  EXPECT_LT(small, 0.2);
  EXPECT_LT(wide, 0.02);
  std::printf("worst err/bound of peaked queries: d 2 and 3 %.3f, d 64 and 128 %.3f\n", small, wide);
}
