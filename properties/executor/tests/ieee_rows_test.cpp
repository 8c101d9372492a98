// check_decode over stored rows that hold ±inf or NaN: every row of the table of docs/numerics.md §4.5,
// each result it accepts and each it rejects.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "impls/flat/flat.h"
#include "properties/executor/decode_check.h"

namespace kv = kvconform;

namespace {
constexpr double Inf = std::numeric_limits<double>::infinity();
const double NaN = std::numeric_limits<double>::quiet_NaN();

/// n rows of d_k = 1 (keys `k`) and d_v values each (`v`, row-major), query `q`.
kv::attention_problem rows(std::vector<double> k, std::vector<double> v, std::vector<double> q) {
  kv::attention_problem p;
  p.d_k = q.size(), p.n = k.size() / p.d_k, p.d_v = v.size() / p.n;
  p.keys = std::move(k), p.values = std::move(v), p.q = std::move(q);
  return p;
}

/// The check's name for one decode ("" when it passes).
std::string verdict(const kv::attention_problem& p, std::vector<double> out, std::vector<double> w,
                    const kv::numeric_profile& prof = {}) {
  return kv::check_decode(p, out.data(), w.data(), prof).check;
}

/// What the flat reference (a two-pass IEEE kernel) returns: always one of the accepted results.
std::string reference_verdict(const kv::attention_problem& p) {
  kv::flat cache(p.n, p.d_k, p.d_v);
  cache.append(kv::array_view(p.keys.data(), {p.n, p.d_k}), kv::array_view(p.values.data(), {p.n, p.d_v}));
  const kv::decode_result r = kv::decode_step(kv::array_view(p.q.data(), {p.d_k}), cache);
  return verdict(p, {r.output.data(), r.output.data() + p.d_v}, {r.weights.data(), r.weights.data() + p.n});
}

const double e = 1 / (1 + std::exp(1.0));  // the weight of score 0 against score 1
}  // namespace

// The case: a key of -100000 stored as fp16 is -inf; its score is -inf, its weight exactly 0.
TEST(IeeeRows, MinusInfScoreTakesWeightZeroAndTheRestIsJudged) {
  const auto p = rows({-Inf, 1}, {5, 2}, {1.0});
  EXPECT_EQ(verdict(p, {2}, {0, 1}), "");
  EXPECT_EQ(verdict(p, {2.5}, {0, 1}), "decode-bound");                     // a wrong finite value
  EXPECT_EQ(verdict(p, {NaN}, {0, 1}), "decode-finite");                    // NaN where every evaluation is finite
  EXPECT_EQ(verdict(p, {2}, {1e-300, 1}), "decode-weights");                // the -inf key's weight is exactly 0
  EXPECT_EQ(verdict(rows({-Inf}, {5}, {1.0}), {5}, {1}), "decode-finite");  // not the one-hot limit
  EXPECT_EQ(reference_verdict(p), "");
}

TEST(IeeeRows, ZeroWeightTimesAnInfiniteValueIsNaNOrSkipped) {
  const auto p = rows({-Inf, 1}, {Inf, 2}, {1.0});
  EXPECT_EQ(verdict(p, {NaN}, {0, 1}), "");  // 0 · inf
  EXPECT_EQ(verdict(p, {2}, {0, 1}), "");    // a kernel that skips zero weights
  EXPECT_EQ(verdict(p, {Inf}, {0, 1}), "decode-finite");
  EXPECT_EQ(verdict(p, {3}, {0, 1}), "decode-bound");
  EXPECT_EQ(reference_verdict(p), "");
  EXPECT_EQ(verdict(rows({-Inf, 1}, {NaN, 2}, {1.0}), {2}, {0, 1}), "");  // a NaN value likewise
}

TEST(IeeeRows, WeightedInfiniteValueGivesThatInfinity) {
  const auto p = rows({0, 1}, {Inf, 1, 2, 3}, {1.0});  // d_v = 2: only column 0 holds the infinity
  const double o1 = e * 1 + (1 - e) * 3;
  EXPECT_EQ(verdict(p, {Inf, o1}, {e, 1 - e}), "");
  EXPECT_EQ(verdict(p, {NaN, o1}, {e, 1 - e}), "decode-finite");
  EXPECT_EQ(verdict(p, {-Inf, o1}, {e, 1 - e}), "decode-finite");
  EXPECT_EQ(verdict(p, {2, o1}, {e, 1 - e}), "decode-finite");  // a finite value where IEEE gives inf
  EXPECT_EQ(verdict(p, {Inf, 0}, {e, 1 - e}), "decode-bound");  // the other column is judged as usual
  EXPECT_EQ(reference_verdict(p), "");
}

// +inf from a weighted row, and 0 · inf (NaN) or nothing from a row scoring -inf.
TEST(IeeeRows, WeightedInfinityBesideAZeroWeightInfinity) {
  const auto p = rows({-Inf, 0, 1}, {Inf, Inf, 2}, {1.0});
  EXPECT_EQ(verdict(p, {Inf}, {0, e, 1 - e}), "");
  EXPECT_EQ(verdict(p, {NaN}, {0, e, 1 - e}), "");
  EXPECT_EQ(verdict(p, {2}, {0, e, 1 - e}), "decode-finite");
  EXPECT_EQ(verdict(p, {-Inf}, {0, e, 1 - e}), "decode-finite");
  EXPECT_EQ(reference_verdict(p), "");
}

TEST(IeeeRows, WeightedNaNValueOrBothInfinitiesGiveNaN) {
  for (const auto& v : {std::vector<double>{NaN, 2}, std::vector<double>{Inf, -Inf}}) {
    const auto p = rows({0, 1}, v, {1.0});
    EXPECT_EQ(verdict(p, {NaN}, {e, 1 - e}), "");
    EXPECT_EQ(verdict(p, {Inf}, {e, 1 - e}), "decode-finite");
    EXPECT_EQ(verdict(p, {0}, {e, 1 - e}), "decode-finite");
    EXPECT_EQ(reference_verdict(p), "");
  }
}

// A finite score 800 below the max: its weight underflows, so inf · w is inf, NaN (0 · inf) or nothing.
TEST(IeeeRows, VanishingWeightTimesAnInfiniteValueMayGoEveryWay) {
  const auto p = rows({-800, 0}, {Inf, 2}, {1.0});
  for (double out : {Inf, NaN, 2.0}) EXPECT_EQ(verdict(p, {out}, {0, 1}), "") << out;
  EXPECT_EQ(verdict(p, {-Inf}, {0, 1}), "decode-finite");
  EXPECT_EQ(verdict(p, {2.5}, {0, 1}), "decode-bound");
  EXPECT_EQ(reference_verdict(p), "");
}

TEST(IeeeRows, NaNOrPlusInfScorePoisonsEveryOutput) {
  for (const auto& p : {rows({Inf, 1}, {1, 2}, {1.0}),                // +inf: the max is inf, inf - inf
                        rows({NaN, 1}, {1, 2}, {1.0}),                // a NaN key
                        rows({1, 1}, {1, 2}, {NaN}),                  // a NaN query
                        rows({Inf, 0, 1, 1}, {1, 2}, {0.0, 1.0}),     // inf · 0
                        rows({Inf, -Inf, 1, 1}, {1, 2}, {1.0, 1.0}),  // inf - inf in the sum
                        rows({1, -1}, {1, 2}, {Inf})}) {              // a query of +inf: +inf and -inf scores
    EXPECT_EQ(verdict(p, {NaN}, {NaN, NaN}), "");
    EXPECT_EQ(verdict(p, {NaN}, {0, 1}), "");  // the weights of a poisoned decode are not judged
    EXPECT_EQ(verdict(p, {2}, {0, 1}), "decode-finite");
    EXPECT_EQ(verdict(p, {Inf}, {0, 1}), "decode-finite");
    EXPECT_EQ(reference_verdict(p), "");
  }
}

// Every score -inf: -inf - (-inf) is NaN, or 0 where a max of -inf is treated as a masked row.
TEST(IeeeRows, EveryScoreMinusInfGivesNaNOrZero) {
  for (const auto& p : {rows({-Inf, -Inf}, {1, 2}, {1.0}), rows({1, 2}, {1, 2}, {-Inf})}) {
    EXPECT_EQ(verdict(p, {NaN}, {NaN, NaN}), "");
    EXPECT_EQ(verdict(p, {0}, {0, 0}), "");
    EXPECT_EQ(verdict(p, {1.5}, {0.5, 0.5}), "decode-finite");
    EXPECT_EQ(verdict(p, {-Inf}, {0, 0}), "decode-finite");
    EXPECT_EQ(verdict(p, {0}, {0.5, 0}), "decode-finite");
    EXPECT_EQ(reference_verdict(p), "");
  }
}

// An online or split-K kernel that meets only -inf scores first computes -inf - (-inf) = NaN and keeps it.
TEST(IeeeRows, RescalingKernelsMayReturnNaNOnceEnoughScoresAreMinusInf) {
  const auto p = rows({-Inf, -Inf, 1}, {1, 2, 3}, {1.0});
  kv::numeric_profile online;
  online.online_block = 2;
  EXPECT_EQ(verdict(p, {NaN}, {NaN, NaN, NaN}, online), "");
  EXPECT_EQ(verdict(p, {3}, {0, 0, 1}, online), "");
  EXPECT_EQ(verdict(p, {NaN}, {NaN, NaN, NaN}), "decode-finite");  // two-pass: never
  online.online_block = 4;                                         // no block of -inf scores alone
  EXPECT_EQ(verdict(p, {NaN}, {NaN, NaN, NaN}, online), "decode-finite");
  kv::numeric_profile split;
  split.splits = 2;
  EXPECT_EQ(verdict(p, {NaN}, {0, 0, NaN}, split), "");
}

// Outside the input domain (§3.5) the finite part of an infinite row may overflow: nothing is judged.
TEST(IeeeRows, FinitePartsBeyondTheDomainAreNotJudged) {
  const auto p = rows({-Inf, 1e300, 1, 1}, {1, 2}, {1.0, 1.0});
  EXPECT_EQ(verdict(p, {12345}, {0, 1}), "");
  // So is a query entry small enough to be flushed to 0 where it meets an infinite key.
  EXPECT_EQ(verdict(rows({-Inf, 1}, {1, 2}, {1e-310}), {12345}, {0, 1}), "");
}

// A masked row is never read, whatever it holds.
TEST(IeeeRows, MaskedRowsMayHoldAnything) {
  auto p = rows({NaN, Inf, 1, 1}, {Inf, 2}, {1.0, 1.0});
  p.live = {0, 1};
  EXPECT_EQ(verdict(p, {2}, {0, 1}), "");
  EXPECT_EQ(verdict(p, {NaN}, {0, 1}), "decode-finite");
}
