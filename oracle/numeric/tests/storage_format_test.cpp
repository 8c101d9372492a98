// The declaration's text and JSON forms round-trip, bad declarations are named, and the group rules hold on their
// edges.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "oracle/numeric/group_rules.h"
#include "oracle/numeric/numeric_profile.h"

namespace kv = kvconform;

TEST(StorageFormat, DescribeParsesBack) {
  namespace f = kv::formats;
  for (const kv::storage_format& x : {f::f64, f::f32, f::fp16, f::bf16, f::e4m3, f::e5m2, f::e4m3_scaled, f::q8_0,
                                      f::q4_1, f::kivi_keys(4, 8), f::kivi_values(8, 8)}) {
    std::string why;
    const auto back = kv::parse_storage_format(kv::describe(x), &why);
    ASSERT_TRUE(back) << kv::describe(x) << ": " << why;
    EXPECT_EQ(*back, x) << kv::describe(x);
  }
  EXPECT_EQ(kv::describe(f::q8_0), "int8 g32 token sym scale=fp16");
  EXPECT_EQ(kv::describe(f::e4m3_scaled), "e4m3 saturate scaled");
  EXPECT_EQ(kv::describe(f::kivi_keys(4, 8)), "int4 g4 channel asym scale=fp16 r8 res=fp16");
}

TEST(StorageFormat, BadDeclarationsAreNamed) {
  std::string why;
  EXPECT_FALSE(kv::parse_storage_format("e4m3 inf", &why));
  EXPECT_NE(why.find("no infinity"), std::string::npos) << why;
  EXPECT_FALSE(kv::parse_storage_format("int4 g4 channel asym r6", &why));
  EXPECT_NE(why.find("whole number of groups"), std::string::npos) << why;
  EXPECT_FALSE(kv::parse_storage_format("fp17", &why));
  EXPECT_NE(why.find("fp17"), std::string::npos) << why;
  EXPECT_FALSE(kv::parse_storage_format("", &why));
  EXPECT_FALSE(kv::parse_storage_format("int8 g0", &why));
}

TEST(StorageFormat, ProfileJsonRoundTrips) {
  kv::numeric_profile p;
  p.keys = kv::formats::kivi_keys(4, 8), p.values = kv::formats::e4m3_scaled, p.working = kv::precision::f32;
  p.online_block = 4, p.u_out = 0x1p-8, p.flush_subnormals = false;
  const kv::numeric_profile back = kv::profile_from_json(p.to_json());
  EXPECT_EQ(back.keys, p.keys);
  EXPECT_EQ(back.values, p.values);
  EXPECT_EQ(back.working, p.working);
  EXPECT_EQ(back.online_block, 4u);
  EXPECT_EQ(back.u_out, p.u_out);
  EXPECT_FALSE(back.flush_subnormals);
  EXPECT_THROW(kv::profile_from_json(R"({"keys": "fp99"})"), std::invalid_argument);
  EXPECT_THROW(kv::profile_from_json(R"({"colour": "red"})"), std::invalid_argument);
  EXPECT_THROW(kv::profile_from_json("[1"), std::invalid_argument);
  EXPECT_EQ(kv::profile_from_json("{}").keys, kv::formats::f64);
}

TEST(StorageFormat, MemoryFormula) {
  EXPECT_EQ(kv::stored_bytes(kv::formats::fp16, 3, 64), 3 * 64 * 2);
  EXPECT_EQ(kv::stored_bytes(kv::formats::q8_0, 1, 64), 64 + 2 * 2);  // 2 blocks of 32 codes + fp16 scale
  EXPECT_EQ(kv::stored_bytes(kv::formats::q4_1, 1, 32), 16 + 2 + 2);  // packed nibbles, scale and min
  EXPECT_EQ(kv::stored_bytes(kv::formats::kivi_keys(4, 8), 8, 2), 8 + 2 * 2 * 4);
}

TEST(GroupRules, IdealScaleGridAndError) {
  const auto& q8 = kv::formats::q8_0;
  const kv::group_ideal s = kv::ideal_group(q8, -2.54, 1.0);  // amax from the negative side
  EXPECT_DOUBLE_EQ(s.scale, 0.02);
  EXPECT_EQ(kv::grid_code(q8, 0.02, 0, 0.02 * 127), 127);
  EXPECT_FALSE(kv::grid_code(q8, 0.02, 0, 0.02 * 128));  // out of range
  EXPECT_FALSE(kv::grid_code(q8, 0.02, 0, 0.0301));      // off the grid
  const auto& q4 = kv::formats::q4_1;
  const kv::group_ideal a = kv::ideal_group(q4, -1.0, 2.0);
  EXPECT_DOUBLE_EQ(a.scale, 0.2);
  EXPECT_EQ(a.zero, -1.0);
  EXPECT_EQ(kv::grid_code(q4, 0.2, -1.0, -1.0 + 0.2 * 15), 15);
  EXPECT_FALSE(kv::grid_code(q4, 0.2, -1.0, -1.2));                     // below the minimum
  EXPECT_LE(kv::group_error_bound(q4, a, 0.2, -1.0, 0.5), 0.1 + 2e-6);  // plus the float slack
  EXPECT_GE(kv::group_error_bound(q4, a, 0.2, -1.0, 0.5), 0.1);
  // A subnormal range: its fp16 scale and minimum are 0, so every value reads 0; the ideal scale's own
  // rounding in double (2.07e-323 rounds to 1.98e-323) must not make that exceed the bound.
  const kv::group_ideal tiny = kv::ideal_group(q4, 0.0, 3.1e-322);
  EXPECT_GE(kv::group_error_bound(q4, tiny, 0.0, 0.0, 3.1e-322), 3.1e-322);
  // One ulp of fp16 at the ideal scale, plus a float rounding.
  EXPECT_NEAR(kv::stored_tolerance(kv::element_format::f16, 0.02), 0x1p-16 + 0.02 * 0x1p-24, 1e-18);
  EXPECT_EQ(kv::stored_tolerance(kv::element_format::f16, 0.0), 0x1p-24);  // the subnormal spacing
}

TEST(NumericProfile, PinnedDecimalsFollowTheFormats) {
  kv::numeric_profile p;
  EXPECT_EQ(kv::pinned_decimals(p), 15);
  p.keys = kv::formats::fp16;
  EXPECT_EQ(kv::pinned_decimals(p), 2);
  p.values = kv::formats::q8_0;
  EXPECT_EQ(kv::pinned_decimals(p), -1);
  EXPECT_NE(p.describe().find("keys fp16, values int8 g32 token sym scale=fp16"), std::string::npos) << p.describe();
}
