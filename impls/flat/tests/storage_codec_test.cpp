// The references' element codecs agree with the model's rounding on every format's edges, and groups keep their rules.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "impls/common/element_codec.h"
#include "impls/flat/flat.h"
#include "oracle/numeric/element_rounding.h"

namespace kv = kvconform;

TEST(StorageCodec, ElementCodecsMatchTheEdgeValues) {
  struct edge {
    kv::storage_format f;
    double x, want;
  };
  kv::storage_format sat = kv::formats::e4m3;
  sat.overflow = kv::overflow_rule::saturate;
  const double inf = std::numeric_limits<double>::infinity();
  // The same independently derived values as oracle/numeric/tests/element_rounding_test.cpp.
  const edge edges[] = {{kv::formats::fp16, 1 + 0x1p-11, 1.0},
                        {kv::formats::fp16, 1 + 3 * 0x1p-11, 1 + 0x1p-9},
                        {kv::formats::fp16, 65519.99, 65504.0},
                        {kv::formats::fp16, 65520.0, inf},
                        {kv::formats::fp16, 3 * 0x1p-25, 0x1p-23},
                        {kv::formats::fp16, 0x1p-25, 0.0},
                        {kv::formats::bf16, 1 + 0x1p-8 + 0x1p-30, 1 + 0x1p-7},
                        {kv::formats::bf16, 0x1.ffp127, inf},
                        {kv::formats::e4m3, 464.0, 448.0},
                        {sat, 1e4, 448.0},
                        {kv::formats::e4m3, 3 * 0x1p-10, 0x1p-8},
                        {kv::formats::e5m2, 61440.0, inf},
                        {kv::formats::e5m2, 1 + 3 * 0x1p-3, 1.5},
                        {kv::formats::e5m2, 3 * 0x1p-17, 0x1p-15}};
  for (const edge& e : edges) {
    EXPECT_EQ(kv::element_rules::store(e.f, e.x), e.want) << kv::describe(e.f) << " " << e.x;
    EXPECT_EQ(kv::element_rules::store(e.f, -e.x), -e.want) << kv::describe(e.f) << " " << -e.x;
  }
  EXPECT_TRUE(std::isnan(kv::element_rules::store(kv::formats::e4m3, 500.0)));
}

TEST(StorageCodec, ElementCodecsAgreeWithTheModelEverywhere) {
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (const auto& f :
       {kv::formats::fp16, kv::formats::bf16, kv::formats::e4m3, kv::formats::e5m2, kv::formats::e4m3_scaled})
    for (int i = 0; i < 20000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const double v = std::ldexp(static_cast<double>(x >> 11) * 0x1p-53 - 0.5, static_cast<int>(x % 48) - 30);
      const double a = kv::element_rules::store_scaled(f, v, 2.75), b = kv::store_element(f, v, 2.75);
      ASSERT_EQ(std::bit_cast<std::uint64_t>(a), std::bit_cast<std::uint64_t>(b)) << kv::describe(f) << " " << v;
    }
}

TEST(StorageCodec, GroupsExposeValuesOnTheirGrid) {
  kv::flat_stored<kv::formats::q4_1> c(4, 40, 3);
  std::vector<double> k(40), v = {-1.0, 0.5, 2.0};
  for (std::size_t j = 0; j < k.size(); ++j) k[j] = std::sin(static_cast<double>(j)) * 3;
  c.append(kv::array_view(k.data(), {40}), kv::array_view(v.data(), {3}));
  const Eigen::MatrixXd s = c.key_scales(), z = c.key_zeros();
  ASSERT_EQ(s.rows(), 1);
  ASSERT_EQ(s.cols(), 2);  // a full block of 32 and a short one of 8
  for (std::size_t j = 0; j < 40; ++j) {
    const double code = (c.keys()(0, static_cast<Eigen::Index>(j)) - z(0, j / 32)) / s(0, j / 32);
    EXPECT_EQ(code, std::nearbyint(code));
    EXPECT_LE(std::fabs(c.keys()(0, static_cast<Eigen::Index>(j)) - k[j]), s(0, j / 32) * 0.5 + 1e-3);
  }
}
