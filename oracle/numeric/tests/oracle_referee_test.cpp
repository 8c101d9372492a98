// The double-double and float128 oracles checked against an MPFR referee of about 168 bits.
#include <gtest/gtest.h>

#include <boost/multiprecision/float128.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <random>

#include "oracle/numeric/attention_oracle.h"
#include "oracle/numeric/dd_oracle.h"
#include "properties/generate/input_classes.h"

namespace kv = kvconform;
namespace mp = boost::multiprecision;
using f128 = mp::float128;
using referee = mp::number<mp::mpfr_float_backend<50>, mp::et_off>;

namespace {
/// The agreement docs/numerics.md §1.5 states: relative to each quantity's natural scale (a_i for a
/// score, w_i for a weight, sum_i w_i |v_ic| for an output), plus an absolute floor of a few
/// denorm_min where results leave double's normal range. The tightest bound the gate applies is
/// above 1e-15 relative (docs/numerics.md §3), eleven orders of magnitude away.
constexpr double agreement = 1e-26;
constexpr double floor_abs = 1e-320;

kv::attention_problem draw(unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  std::uniform_int_distribution<int> pick(0, 3);
  kv::attention_problem p;
  p.n = 1 + rng() % 200, p.d_k = 1 + rng() % 64, p.d_v = 1 + rng() % 8;
  const double score = std::vector<double>{1, 8, 1000, 1e4}[static_cast<std::size_t>(pick(rng))];
  for (std::size_t i = 0; i < p.n * p.d_k; ++i) p.keys.push_back(g(rng));
  for (std::size_t i = 0; i < p.n * p.d_v; ++i) p.values.push_back(seed % 2 ? 1000 + g(rng) : g(rng));
  for (std::size_t j = 0; j < p.d_k; ++j) p.q.push_back(score / std::sqrt(double(p.d_k)) * g(rng));
  return p;
}

/// n rows of one input class, its query, and every fifth key masked when `masked`.
kv::attention_problem from_class(kv::input_class c, std::size_t n, std::size_t d, unsigned seed, bool masked) {
  const kv::row_source src(c, d, d, seed);
  kv::attention_problem p;
  p.n = n, p.d_k = p.d_v = d;
  std::vector<double> keys, values;
  src.rows(0, n, seed + 1, keys, values);
  p.keys = std::move(keys), p.values = std::move(values);
  p.q = src.query();
  if (masked)
    for (std::size_t i = 0; i < n; ++i) p.live.push_back(i % 5 != 2);
  return p;
}

referee value(kv::dd::ddouble a) { return referee(a.hi) + referee(a.lo); }

/// The worst error of `got` against the referee in units of the stated agreement (<= 1 passes).
double worst_against_referee(const kv::attention_problem& p, const kv::dd_oracle_result& got) {
  const auto want = kv::attention_oracle<referee>(p);
  double worst = 0;
  auto track = [&](const referee& err, const referee& scale) {
    worst = std::max(worst, double(err / (agreement * scale + floor_abs)));
  };
  for (std::size_t i = 0; i < p.n; ++i) {
    if (!p.is_live(i)) continue;
    referee a = 0;  // a_i, the scale of the score's rounding
    for (std::size_t j = 0; j < p.d_k; ++j) a += abs(referee(p.keys[i * p.d_k + j]) * referee(p.q[j]));
    track(abs(value(got.s[i]) - want.s[i]), a / sqrt(referee(p.d_k)));
    track(abs(value(got.w[i]) - want.w[i]), want.w[i]);
  }
  for (std::size_t c = 0; c < p.d_v; ++c) {
    referee scale = 0;  // sum_i w_i |v_ic|, the natural scale of output c
    for (std::size_t i = 0; i < p.n; ++i) scale += want.w[i] * abs(referee(p.values[i * p.d_v + c]));
    track(abs(value(got.o[c]) - want.o[c]), scale);
  }
  return worst;
}
}  // namespace

TEST(OracleReferee, Float128AgreesWithMpfr168BitsTo1e28) {
  ASSERT_GE(std::numeric_limits<referee>::digits, 166);
  for (unsigned seed = 0; seed < 40; ++seed) {
    const auto p = draw(seed);
    const auto a = kv::attention_oracle<f128>(p);
    const auto b = kv::attention_oracle<referee>(p);
    for (std::size_t c = 0; c < p.d_v; ++c) {
      referee scale = 0;  // sum_i w_i |v_ic|, the natural scale of output c
      for (std::size_t i = 0; i < p.n; ++i) scale += b.w[i] * abs(referee(p.values[i * p.d_v + c]));
      EXPECT_LE(abs(referee(a.o[c]) - b.o[c]), 1e-28 * scale) << "seed " << seed << " c " << c;
    }
    for (std::size_t i = 0; i < p.n; ++i)
      EXPECT_LE(abs(referee(a.w[i]) - b.w[i]), 1e-28 * b.w[i] + 1e-300) << "seed " << seed << " i " << i;
  }
}

TEST(OracleReferee, DoubleDoubleAgreesWithMpfrOnTheScoreScales) {
  for (unsigned seed = 0; seed < 40; ++seed) {
    const auto p = draw(seed);
    EXPECT_LE(worst_against_referee(p, kv::attention_oracle_dd(p)), 1) << "seed " << seed;
  }
}

// Every input class at small, medium and production widths, with and without masked keys.
TEST(OracleReferee, DoubleDoubleAgreesWithMpfrOnEveryInputClass) {
  double worst = 0;
  for (const kv::input_class c : kv::all_input_classes()) {
    unsigned seed = 100;
    for (const auto& [n, d] : {std::pair<std::size_t, std::size_t>{1, 1}, {9, 3}, {40, 16}, {160, 64}, {24, 128}}) {
      const auto p = from_class(c, n, d, ++seed, n % 2 == 0);
      const double w = worst_against_referee(p, kv::attention_oracle_dd(p));
      EXPECT_LE(w, 1) << kv::to_string(c) << " n " << n << " d " << d << " seed " << seed;
      worst = std::max(worst, w);
    }
  }
  std::cout << "[ measured ] worst error / (1e-26 x scale + 1e-320): " << worst << "\n";
}

// The largest sizes the issue names, for the classes that stress the oracle most: a large
// score range (huge_1e4), cancellation (a_i >> |s_i|) and one ill-conditioned key in four.
TEST(OracleReferee, DoubleDoubleAgreesWithMpfrAtProductionSizes) {
  for (const auto& [c, n, d] :
       {std::tuple{kv::input_class::cancellation, std::size_t{4096}, std::size_t{256}},
        std::tuple{kv::input_class::huge_1e4, std::size_t{4096}, std::size_t{128}},
        std::tuple{kv::input_class::ill_conditioned_key, std::size_t{1024}, std::size_t{256}}}) {
    const auto p = from_class(c, n, d, 7, false);
    const double w = worst_against_referee(p, kv::attention_oracle_dd(p));
    EXPECT_LE(w, 1) << kv::to_string(c) << " n " << n << " d " << d;
    std::cout << "[ measured ] " << kv::to_string(c) << " n " << n << " d " << d << ": " << w << "\n";
  }
}
