// Pins the model's rounding of every element format on its edges: ties, max finite, overflow, subnormals, NaN.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "oracle/numeric/element_rounding.h"
#include "oracle/numeric/numeric_profile.h"

namespace kv = kvconform;

namespace {
// Expected values are exact binary fractions worked out from each format's definition (and,
// for fp16, cross-checked with numpy's float64 -> float16 conversion), never from the code.
constexpr double inf = std::numeric_limits<double>::infinity();

kv::storage_format with(kv::storage_format f, kv::overflow_rule o) { return f.overflow = o, f; }
kv::storage_format ftz(kv::storage_format f) { return f.subnormals = false, f; }

void expect_bits(double want, double got, const char* what) {
  EXPECT_EQ(std::bit_cast<std::uint64_t>(want), std::bit_cast<std::uint64_t>(got)) << what << ": got " << got;
}
}  // namespace

TEST(ElementRounding, Fp16TiesMaxOverflowSubnormals) {
  const auto& h = kv::formats::fp16;
  EXPECT_EQ(kv::round_element(h, 1 + 0x1p-11), 1.0);                    // tie: 1 is even
  EXPECT_EQ(kv::round_element(h, 1 + 3 * 0x1p-11), 1 + 0x1p-9);         // tie: up to the even neighbour
  EXPECT_EQ(kv::round_element(h, 1 + 0x1p-11 + 0x1p-40), 1 + 0x1p-10);  // just above a tie
  EXPECT_EQ(kv::round_element(h, 65504.0), 65504.0);                    // max finite
  EXPECT_EQ(kv::round_element(h, 65519.99), 65504.0);                   // below the overflow tie
  EXPECT_EQ(kv::round_element(h, 65520.0), inf);                        // the tie overflows (even is 2^16)
  EXPECT_EQ(kv::round_element(with(h, kv::overflow_rule::saturate), 1e6), 65504.0);
  EXPECT_EQ(kv::round_element(h, -inf), -inf);
  EXPECT_EQ(kv::round_element(h, 0x1p-24), 0x1p-24);  // smallest subnormal
  expect_bits(0.0, kv::round_element(h, 0x1p-25), "half the smallest subnormal ties to 0");
  EXPECT_EQ(kv::round_element(h, 0x1p-25 + 0x1p-40), 0x1p-24);
  EXPECT_EQ(kv::round_element(h, 3 * 0x1p-25), 0x1p-23);        // subnormal tie to even
  EXPECT_EQ(kv::round_element(h, 0x1p-14 - 0x1p-25), 0x1p-14);  // rounds up into the normals
  expect_bits(-0.0, kv::round_element(ftz(h), -0x1p-15), "a flushed subnormal keeps its sign");
  EXPECT_EQ(kv::round_element(ftz(h), 0x1p-14), 0x1p-14);  // the smallest normal stays
  expect_bits(-0.0, kv::round_element(h, -0.0), "-0");
}

TEST(ElementRounding, Bf16IsExactFromDouble) {
  const auto& b = kv::formats::bf16;
  EXPECT_EQ(kv::round_element(b, 1 + 0x1p-8), 1.0);
  EXPECT_EQ(kv::round_element(b, 1 + 3 * 0x1p-8), 1 + 0x1p-6);
  // Through float this value would first become the tie 1 + 2^-8 and then 1: rounding twice.
  EXPECT_EQ(kv::round_element(b, 1 + 0x1p-8 + 0x1p-30), 1 + 0x1p-7);
  EXPECT_EQ(kv::round_element(b, 0x1.fep127), 0x1.fep127);  // max finite
  EXPECT_EQ(kv::round_element(b, 0x1.ffp127), inf);         // the overflow tie
  EXPECT_EQ(kv::round_element(b, 0x1.fefffp127), 0x1.fep127);
  EXPECT_EQ(kv::round_element(b, 0x1p-133), 0x1p-133);  // smallest subnormal
  EXPECT_EQ(kv::round_element(b, 0x1p-134), 0.0);
  EXPECT_EQ(kv::round_element(b, 3 * 0x1p-134), 0x1p-132);
  EXPECT_EQ(kv::round_to(kv::precision::bf16, 1 + 0x1p-8 + 0x1p-30), 1 + 0x1p-7);
}

TEST(ElementRounding, E4m3FnSaturatingOrNan) {
  const auto& e = kv::formats::e4m3;  // NaN on overflow
  const auto sat = with(e, kv::overflow_rule::saturate);
  EXPECT_EQ(kv::round_element(e, 448.0), 448.0);  // max finite, S.1111.110
  EXPECT_EQ(kv::round_element(e, 464.0), 448.0);  // tie with the NaN code: 448 is even
  EXPECT_TRUE(std::isnan(kv::round_element(e, 464.0 + 0x1p-40)));
  EXPECT_TRUE(std::isnan(kv::round_element(e, inf)));
  EXPECT_EQ(kv::round_element(sat, 464.0 + 0x1p-40), 448.0);
  EXPECT_EQ(kv::round_element(sat, -inf), -448.0);
  EXPECT_EQ(kv::round_element(e, 1 + 0x1p-4), 1.0);
  EXPECT_EQ(kv::round_element(e, 1 + 3 * 0x1p-4), 1.25);
  EXPECT_EQ(kv::round_element(e, 0x1p-9), 0x1p-9);  // smallest subnormal
  EXPECT_EQ(kv::round_element(e, 0x1p-10), 0.0);
  EXPECT_EQ(kv::round_element(e, 3 * 0x1p-10), 0x1p-8);
  EXPECT_EQ(kv::round_element(e, 0x1.ep-7), 0x1p-6);  // 0.1111 x 2^-6 rounds to the normal
  const double nan = kv::round_element(e, -std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(std::isnan(nan) && std::signbit(nan));
}

TEST(ElementRounding, E5m2WithInfinity) {
  const auto& e = kv::formats::e5m2;
  EXPECT_EQ(kv::round_element(e, 57344.0), 57344.0);  // max finite
  EXPECT_EQ(kv::round_element(e, 61439.0), 57344.0);
  EXPECT_EQ(kv::round_element(e, 61440.0), inf);  // the overflow tie
  EXPECT_EQ(kv::round_element(e, 1 + 0x1p-3), 1.0);
  EXPECT_EQ(kv::round_element(e, 1 + 3 * 0x1p-3), 1.5);
  EXPECT_EQ(kv::round_element(e, 0x1p-16), 0x1p-16);  // smallest subnormal
  EXPECT_EQ(kv::round_element(e, 0x1p-17), 0.0);
  EXPECT_EQ(kv::round_element(e, 3 * 0x1p-17), 0x1p-15);
  EXPECT_EQ(kv::round_element(ftz(e), 0x1p-15), 0.0);
}

TEST(ElementRounding, NanKeepsSignAndTopPayload) {
  const double payload = std::bit_cast<double>(0x7ff4000000000001ull);  // signalling, payload in bits 50 and 0
  const double h = kv::round_element(kv::formats::fp16, payload);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(h), 0x7ffc000000000000ull);  // quieted, the low payload bit cut
  EXPECT_TRUE(std::isnan(kv::round_element(kv::formats::e5m2, payload)));
  EXPECT_TRUE(std::isnan(kv::round_element(kv::formats::f64, payload)));
}

TEST(ElementRounding, F32AndF64) {
  EXPECT_EQ(kv::round_element(kv::formats::f32, 1 + 0x1p-24), 1.0);
  EXPECT_EQ(kv::round_element(kv::formats::f32, 1 + 3 * 0x1p-24), 1 + 0x1p-22);
  EXPECT_EQ(kv::round_element(kv::formats::f32, 0x1.ffffffp127), inf);
  EXPECT_EQ(kv::round_element(kv::formats::f32, 0x1p-150), 0.0);
  EXPECT_EQ(kv::round_element(kv::formats::f64, 0x1.23456789abcdep-1030), 0x1.23456789abcdep-1030);
}

TEST(ElementRounding, ScaledQuotientIsRoundedOnce) {
  // x / s rounds to the e4m3 midpoint 1.0625 in double, but the exact quotient lies above it
  // (first pair) or below it (second): rounding the double quotient would give 1.0 both times.
  const auto& f = kv::formats::e4m3_scaled;
  const double s = 0x1.bb1bde291372dp+2;
  EXPECT_EQ(0x1.d6cd9c0ba4aa0p+2 / s, 1.0625);
  EXPECT_EQ(kv::store_element(f, 0x1.d6cd9c0ba4aa0p+2, s), 1.125 * s);
  EXPECT_EQ(kv::store_element(f, 0x1.d6cd9c0ba4a9fp+2, s), 1.0 * s);
  EXPECT_EQ(kv::store_element(f, 1000.0, 2.0), 896.0);                     // saturates at 448 x 2
  EXPECT_EQ(kv::store_element(kv::formats::fp16, 1 + 0x1p-11, 3.0), 1.0);  // unscaled formats ignore s
}

TEST(ElementRounding, ErrorBoundCoversEveryRounding) {
  for (const auto& f : {kv::formats::fp16, kv::formats::bf16, kv::formats::e4m3_scaled, kv::formats::e5m2})
    for (double x = -70000; x < 70000; x += 97.25)
      for (double scale : {1.0, 0.37}) {
        const double got = kv::store_element(f, x * 1e-3, scale);
        if (std::isfinite(got)) {
          EXPECT_LE(std::fabs(got - x * 1e-3), kv::element_error_bound(f, x * 1e-3, scale));
        }
      }
}
