// The float128 oracle of record checked against an MPFR referee of about 168 bits.
#include <gtest/gtest.h>

#include <boost/multiprecision/float128.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <random>

#include "oracle/numeric/attention_oracle.h"

namespace kv = kvconform;
namespace mp = boost::multiprecision;
using f128 = mp::float128;
using referee = mp::number<mp::mpfr_float_backend<50>, mp::et_off>;

namespace {
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
