// Unit tests of the double-double layer: exact transformations, exp and constants against MPFR, kernel twins.
#include <gtest/gtest.h>

#include <boost/multiprecision/float128.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <random>

#include "oracle/numeric/dd_oracle.h"
#include "oracle/numeric/double_double.h"

namespace kv = kvconform;
namespace dd = kvconform::dd;
namespace mp = boost::multiprecision;
using f128 = mp::float128;
using referee = mp::number<mp::mpfr_float_backend<50>, mp::et_off>;

namespace {
referee value(dd::ddouble a) { return referee(a.hi) + referee(a.lo); }

/// |a - want| / |want|, in the referee's precision.
double relative_error(dd::ddouble a, const referee& want) { return double(abs(value(a) - want) / abs(want)); }

/// Doubles whose exponents differ by less than 50, so that sums and products are exact in binary128.
double draw(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> mantissa(1, 2);
  std::uniform_int_distribution<int> exponent(-25, 25);
  return (rng() & 1 ? -1 : 1) * std::ldexp(mantissa(rng), exponent(rng));
}
}  // namespace

TEST(DoubleDouble, TwoSumAndTwoProductAreExact) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    const double a = draw(rng), b = draw(rng);
    const dd::ddouble s = dd::two_sum(a, b), p = dd::two_prod(a, b);
    ASSERT_EQ(f128(s.hi) + f128(s.lo), f128(a) + f128(b)) << a << " + " << b;
    ASSERT_EQ(f128(p.hi) + f128(p.lo), f128(a) * f128(b)) << a << " * " << b;
    ASSERT_EQ(s.hi, a + b);  // the high part is the rounded result
    ASSERT_EQ(p.hi, a * b);
  }
}

TEST(DoubleDouble, ArithmeticIsAccurateTo106Bits) {
  std::mt19937_64 rng(8);
  for (int i = 0; i < 2000; ++i) {
    const dd::ddouble a = dd::two_prod(draw(rng), draw(rng)), b = dd::two_prod(draw(rng), draw(rng));
    const referee x = value(a), y = value(b);
    EXPECT_LE(relative_error(dd::add(a, b), x + y), 4e-32 * double((abs(x) + abs(y)) / abs(x + y)));
    EXPECT_LE(relative_error(dd::mul(a, b), x * y), 1e-31);
    EXPECT_LE(relative_error(dd::div(a, b), x / y), 1e-31);
    const double d = std::fabs(a.hi);
    EXPECT_LE(relative_error(dd::sqrt(d), sqrt(referee(d))), 1e-31);
  }
}

TEST(DoubleDouble, ConstantsMatchMpfr) {
  EXPECT_LE(relative_error(dd::ln2, log(referee(2))), 2e-32);
  referee factorial = 1;
  for (int k = 0; k <= 11; ++k) {
    if (k > 0) factorial *= k;
    EXPECT_LE(relative_error(dd::inverse_factorials()[k], 1 / factorial), 1e-31) << "1/" << k << "!";
  }
}

TEST(DoubleDouble, ExpMatchesMpfrOverTheRangeAWeightCanTake) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> x(-745, 0);
  std::vector<dd::ddouble> args = {{0, 0}, {-1e-300, 0}, {-1e-17, 0}, {-0.5, 1e-18}, {-1, 0}, {-708.5, 0}};
  for (int i = 0; i < 3000; ++i) args.push_back(dd::two_sum(x(rng), x(rng) * 1e-17));
  // e^x is as accurate as x: relative error about |x| 2^-106 from x's own last bit, plus the series'.
  double worst = 0;
  for (const dd::ddouble& a : args) {
    const referee want = exp(value(a));
    if (want < 1e-290) continue;  // weights this small lose digits in absolute terms only (below)
    worst = std::max(worst, relative_error(dd::exp(a), want) / (1 + std::fabs(a.hi)));
  }
  EXPECT_LE(worst, 1e-31);
  // Near and below double's smallest numbers the absolute error stays within a few denorm_min.
  for (double a = -745.3; a < -700; a += 0.37) {
    const referee err = abs(value(dd::exp({a, 0})) - exp(referee(a)));
    EXPECT_LE(double(err), 2 * std::numeric_limits<double>::denorm_min()) << a;
  }
  EXPECT_EQ(dd::exp({-746, 0}).hi, 0);
  EXPECT_EQ(dd::exp({0, 0}).hi, 1);
  EXPECT_TRUE(std::isnan(dd::exp({NAN, 0}).hi));
}

TEST(DoubleDouble, FmaKernelsGiveTheGenericKernelsBitForBit) {
  if (!kv::dd_fma_kernels_available()) GTEST_SKIP() << "this CPU has no AVX2 + FMA: only the generic kernels run";
  std::mt19937_64 rng(10);
  std::normal_distribution<double> g;
  for (std::size_t d : {1, 2, 3, 4, 5, 7, 8, 64, 67, 128}) {
    kv::attention_problem p;
    p.n = 37, p.d_k = d, p.d_v = d + 3;
    for (std::size_t i = 0; i < p.n * p.d_k; ++i) p.keys.push_back(10 * g(rng));
    for (std::size_t i = 0; i < p.n * p.d_v; ++i) p.values.push_back(1000 + g(rng));
    for (std::size_t j = 0; j < d; ++j) p.q.push_back(g(rng));
    const auto a = kv::attention_oracle_dd(p, kv::dd_kernels::generic);
    const auto b = kv::attention_oracle_dd(p, kv::dd_kernels::fma);
    for (std::size_t i = 0; i < p.n; ++i) {
      ASSERT_EQ(a.s[i].hi, b.s[i].hi) << "d " << d << " i " << i;
      ASSERT_EQ(a.s[i].lo, b.s[i].lo) << "d " << d << " i " << i;
      ASSERT_EQ(a.w[i].lo, b.w[i].lo) << "d " << d << " i " << i;
    }
    for (std::size_t c = 0; c < p.d_v; ++c) {
      ASSERT_EQ(a.o[c].hi, b.o[c].hi) << "d " << d << " c " << c;
      ASSERT_EQ(a.o[c].lo, b.o[c].lo) << "d " << d << " c " << c;
    }
  }
}
