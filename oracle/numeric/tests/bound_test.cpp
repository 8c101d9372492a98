// Unit tests of the derived bound on closed forms, and proof that it is neither vacuous nor too tight.
#include <gtest/gtest.h>

#include <boost/multiprecision/float128.hpp>
#include <cmath>
#include <random>

#include "oracle/numeric/attention_oracle.h"
#include "oracle/numeric/bound.h"

namespace kv = kvconform;
using f128 = boost::multiprecision::float128;

namespace {
struct evaluated {
  kv::oracle_result<f128> o;
  std::vector<double> s, w, od;
  kv::attention_bound b;
};

evaluated evaluate(const kv::attention_problem& p, const kv::numeric_profile& prof = {}, double F = 2) {
  evaluated e;
  e.o = kv::attention_oracle<f128>(p);
  for (std::size_t i = 0; i < p.n; ++i) e.s.push_back(double(e.o.s[i])), e.w.push_back(double(e.o.w[i]));
  for (std::size_t c = 0; c < p.d_v; ++c) e.od.push_back(double(e.o.o[c]));
  e.b = kv::compute_bound(p, e.s, double(e.o.m), e.w, e.od, prof, F);
  return e;
}

kv::attention_problem random_problem(std::size_t n, std::size_t d, double score_scale, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  kv::attention_problem p;
  p.n = n, p.d_k = d, p.d_v = d;
  for (std::size_t i = 0; i < n * d; ++i) p.keys.push_back(g(rng)), p.values.push_back(g(rng));
  for (std::size_t j = 0; j < d; ++j) p.q.push_back(score_scale * g(rng));
  return p;
}

/// A decode computing in `Acc` (float to model the "float accumulator in a double cache" bug).
template <class Acc>
std::vector<double> decode(const kv::attention_problem& p) {
  std::vector<Acc> s(p.n);
  Acc m = -INFINITY, l = 0;
  for (std::size_t i = 0; i < p.n; ++i) {
    Acc dot = 0;
    for (std::size_t j = 0; j < p.d_k; ++j) dot += Acc(p.keys[i * p.d_k + j]) * Acc(p.q[j]);
    s[i] = dot / std::sqrt(Acc(p.d_k));
    m = std::max(m, s[i]);
  }
  for (auto& x : s) l += (x = std::exp(x - m));
  std::vector<double> o(p.d_v, 0.0);
  for (std::size_t i = 0; i < p.n; ++i)
    for (std::size_t c = 0; c < p.d_v; ++c) o[c] += double(s[i] / l * Acc(p.values[i * p.d_v + c]));
  return o;
}

double worst_ratio(const kv::attention_problem& p, const std::vector<double>& out) {
  const evaluated e = evaluate(p, {}, 1);
  double r = 0;
  for (std::size_t c = 0; c < p.d_v; ++c) r = std::max(r, double(abs(f128(out[c]) - e.o.o[c])) / e.b.output[c]);
  return r;
}
}  // namespace

TEST(Bound, GammaIsInfiniteOnceKuReachesOne) {
  EXPECT_DOUBLE_EQ(kv::gamma_k(2, 0.25), 1.0);
  EXPECT_TRUE(std::isinf(kv::gamma_k(4, 0.25)));
}

TEST(Bound, SingleKeyGivesWeightOneAndBoundNearF2d6a) {
  kv::attention_problem p{1, 4, 2, {1, -1, 1, -1}, {3, -5}, {0.5, 0.5, -0.5, 0.5}, {}};
  const evaluated e = evaluate(p);
  EXPECT_EQ(e.o.w[0], 1);
  EXPECT_EQ(e.od[0], 3);
  // tau ~ E + Abar + 2Ku with a_0 = 1: E = gamma_10 + 4u; bound ~ 2 (2(10 + 4) + 2*5) u |v|.
  const double u = 0x1p-53, expected = 2 * (2 * (10 + 4) + 2 * 5) * u;
  EXPECT_NEAR(e.b.output[0] / 3, expected, 0.05 * expected);
  EXPECT_NEAR(e.b.output[1] / 5, expected, 0.05 * expected);
}

TEST(Bound, AllEqualScoresGiveExactWeightsOneOverN) {
  kv::attention_problem p = random_problem(7, 3, 0, 11);  // q = 0
  const evaluated e = evaluate(p);
  for (const auto& w : e.o.w) EXPECT_EQ(w, f128(1) / 7);
  // Pure summation error: tau ~ (E + Abar) + 2 K u with E = 4u and K = n + 4.
  const double u = 0x1p-53;
  for (std::size_t c = 0; c < 3; ++c) {
    double S = 0;
    for (std::size_t i = 0; i < 7; ++i) S += std::fabs(p.values[i * 3 + c]) / 7;
    EXPECT_NEAR(e.b.output[c], 2 * S * (8 + 2 * 11) * u, 1e-3 * S * 30 * u);
  }
}

TEST(Bound, OneHotWeightsAreExactAndBoundsTheOthersByMu) {
  kv::attention_problem p{3, 1, 1, {0, -900, -1000}, {1, 2, 3}, {1}, {}};
  const evaluated e = evaluate(p);
  EXPECT_EQ(e.w[0], 1);
  EXPECT_EQ(e.w[1], 0);  // e^-900 underflows double
  EXPECT_LE(e.b.weights[1], 3 * DBL_MIN);
}

TEST(Bound, SeedWorkedExampleOracleMatchesTheSeedNumbers) {
  kv::attention_problem p{3, 2, 2, {1, 0, 0, 1, 1, 1}, {1, 2, 3, 4, 5, 6}, {1, 0}, {}};
  const evaluated e = evaluate(p);
  EXPECT_EQ(std::llround(e.w[0] * 1e8), 40111209);
  EXPECT_EQ(std::llround(e.w[1] * 1e8), 19777581);
  EXPECT_LT(double(abs(e.o.o[0] - 3)), 1e-30);
  EXPECT_LT(double(abs(e.o.o[1] - 4)), 1e-30);
  EXPECT_LT(worst_ratio(p, decode<double>(p)), 0.1);
}

TEST(Bound, CorrectDoubleDecodeStaysFarBelowAndFloatAccumulationFarAbove) {
  for (unsigned seed = 0; seed < 20; ++seed) {
    const auto p = random_problem(64, 16, 1, seed);
    EXPECT_LT(worst_ratio(p, decode<double>(p)), 0.1) << seed;
    EXPECT_GT(worst_ratio(p, decode<float>(p)), 100) << seed;
  }
}

TEST(Bound, MagnitudeTermCoversCancellation) {
  // a_i >> |s_i|: keys orthogonal to q up to a large component; |s_i| would understate the error.
  kv::attention_problem p{2, 2, 1, {1e6, 1e6 + 1, 3e5, 3e5}, {1, -1}, {1, -1}, {}};
  const evaluated e = evaluate(p);
  kv::attention_problem scaled = p;
  scaled.keys = {0, 1, 0, 0};  // same scores but no cancellation
  const evaluated f = evaluate(scaled);
  EXPECT_GT(e.b.output[0], 1e4 * f.b.output[0]);
}

TEST(Bound, MaskedKeysGetExactZeroBoundsAndFullyMaskedRowsGiveZeros) {
  kv::attention_problem p{2, 1, 1, {1, 2}, {1, 2}, {1}, {1, 0}};
  const evaluated e = evaluate(p);
  EXPECT_EQ(e.b.weights[1], 0);
  EXPECT_EQ(e.o.w[1], 0);
  p.live = {0, 0};
  const evaluated z = evaluate(p);
  EXPECT_FALSE(z.o.any_live);
  EXPECT_EQ(z.b.output[0], 0);
}

TEST(Bound, OutOfDomainIsFlagged) {
  kv::attention_problem p{1, 1, 1, {1e15}, {1}, {1}, {}};
  EXPECT_FALSE(evaluate(p).b.in_domain);
  kv::numeric_profile f32;
  f32.storage = f32.working = kv::precision::f32;
  p.keys = {1e6};
  EXPECT_FALSE(evaluate(p, f32).b.in_domain);
  p.keys = {1e5};
  EXPECT_TRUE(evaluate(p, f32).b.in_domain);
}

TEST(Bound, ValuesAtTheTopOfDoublesRangeGiveAFiniteBound) {
  // |o| + B can round past DBL_MAX; without an output rounding declared that must not become 0 x inf.
  kv::attention_problem p{1, 1, 1, {0.6123100112693888}, {-1.7976931348623157e+308}, {-1}, {}};
  const evaluated e = evaluate(p);
  EXPECT_TRUE(std::isfinite(e.b.output[0]));
  EXPECT_GT(e.b.output[0], 0);
}
