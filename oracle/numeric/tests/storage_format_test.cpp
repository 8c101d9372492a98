// The declaration's text and JSON forms round-trip, bad declarations are named, and the group rules hold on their
// edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "oracle/numeric/element_rounding.h"
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

TEST(StorageFormat, LongAndShortFormsMeanTheSame) {
  // Each long form (docs/port-protocol.md's) and the short form `kvconform list` prints; describe gives the short one.
  const std::pair<const char*, const char*> pairs[] = {
      {"int8 group 32 token symmetric scale f16 residual 0", "int8 g32 token sym scale=fp16"},
      {"int4 group 32 channel asymmetric scale f16 residual 128 (residual f64)", "int4 g32 channel asym scale=fp16 r128"},
      {"int4 group 4 channel asymmetric scale fp16 residual 8 (residual fp16)",
       "int4 g4 channel asym scale=fp16 r8 res=fp16"},
      {"int8 group 64 token asymmetric scale bf16", "int8 g64 token asym scale=bf16"},
      {"int8 group 16 token symmetric scale f32 residual 4 residual bf16 ftz", "int8 g16 token sym scale=f32 r4 res=bf16 ftz"},
      {"f16 ftz", "fp16 ftz"},
      {"e4m3 saturate scaled", "e4m3 saturate scaled"},
  };
  for (const auto& [long_form, short_form] : pairs) {
    std::string why;
    const auto a = kv::parse_storage_format(long_form, &why);
    ASSERT_TRUE(a) << long_form << ": " << why;
    const auto b = kv::parse_storage_format(short_form, &why);
    ASSERT_TRUE(b) << short_form << ": " << why;
    EXPECT_EQ(*a, *b) << long_form;
    EXPECT_EQ(kv::describe(*a), short_form);
    EXPECT_EQ(kv::parse_storage_format(kv::describe(*a)), *a) << short_form;
  }
  EXPECT_EQ(*kv::parse_storage_format("int8 group 32 token symmetric scale f16 residual 0"), kv::formats::q8_0);
  EXPECT_EQ(*kv::parse_storage_format("int4 group 32 token asymmetric scale f16"), kv::formats::q4_1);
}

TEST(StorageFormat, AnErrorNamesTheWordAndWhatItAcceptsThere) {
  auto error_of = [](const char* text) {
    std::string why;
    EXPECT_FALSE(kv::parse_storage_format(text, &why)) << text;
    return why;
  };
  EXPECT_EQ(error_of("fp16 group 32"),
            "unknown word \"group\" in storage format \"fp16 group 32\": after an element format come inf, saturate, "
            "nan, scaled, ftz");
  EXPECT_EQ(error_of("int8 grup 32"),
            "unknown word \"grup\" in storage format \"int8 grup 32\": after int8 or int4 come group N (gN), token, "
            "channel, symmetric (sym), asymmetric (asym), scale S (scale=S), residual N (rN), residual E (res=E), ftz");
  EXPECT_EQ(error_of("int8 group x"),
            "unknown word \"x\" in storage format \"int8 group x\": group takes a count of values (group 32)");
  EXPECT_EQ(error_of("int8 group"), "storage format \"int8 group\" ends after \"group\": group takes a count of values "
                                    "(group 32)");
  EXPECT_EQ(error_of("int8 scale e4m3"),
            "unknown word \"e4m3\" in storage format \"int8 scale e4m3\": a scale is stored in f32, fp16 (f16) or bf16");
  EXPECT_EQ(error_of("int4 residual many"),
            "unknown word \"many\" in storage format \"int4 residual many\": residual takes a count of tokens or an "
            "element format (f64, f32, fp16, bf16, e4m3, e5m2)");
  EXPECT_EQ(error_of("group 32 int8"),
            "unknown word \"group\" in storage format \"group 32 int8\": a storage format begins with an element format "
            "(f64, f32, fp16 or f16, bf16, e4m3, e5m2) or with int8 or int4");
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
  // A hybrid cache's sliding group: element formats of its own, unset by default.
  p.sliding_keys = kv::formats::e4m3_scaled;
  const kv::numeric_profile grouped = kv::profile_from_json(p.to_json());
  EXPECT_EQ(grouped.sliding_keys, kv::formats::e4m3_scaled);
  EXPECT_FALSE(grouped.sliding_values);
  EXPECT_EQ(grouped.values_of(true), p.values);
  EXPECT_FALSE(kv::profile_from_json("{}").sliding_keys);
  EXPECT_THROW(kv::profile_from_json(R"({"sliding_keys": "int8 g32 token sym scale=fp16"})"), std::invalid_argument);
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

namespace {
/// Rows of `width` gaussian values, a fixed draw.
std::vector<double> gaussian_rows(std::size_t rows, std::size_t width, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss;
  std::vector<double> x(rows * width);
  for (double& v : x) v = gauss(rng);
  return x;
}

/// `x` stored as llama.cpp stores it, blocks of 32 along each row: q8_0 (codes from the float scale amax / 127,
/// rounded half away from zero) or q4_1 (codes from (max - min) / 15 and the minimum, plus a half, truncated),
/// scale and minimum kept in fp16, dequantized in float.
std::vector<double> llama_cpp_rows(const std::vector<double>& x, std::size_t width, bool q4_1) {
  std::vector<double> out(x.size());
  auto half = [](float v) { return static_cast<float>(kv::round_element(kv::formats::fp16, v)); };
  for (std::size_t a = 0; a < x.size(); a += width)
    for (std::size_t g = 0; g < width; g += 32) {
      const std::size_t n = std::min<std::size_t>(32, width - g);
      float lo = static_cast<float>(x[a + g]), hi = lo, amax = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const float v = static_cast<float>(x[a + g + j]);
        lo = std::min(lo, v), hi = std::max(hi, v), amax = std::max(amax, std::fabs(v));
      }
      const float d = q4_1 ? (hi - lo) / 15 : amax / 127, id = d != 0 ? 1 / d : 0, m = q4_1 ? lo : 0;
      for (std::size_t j = 0; j < n; ++j) {
        const float v = static_cast<float>(x[a + g + j]);
        const float code = q4_1 ? std::min(15.0f, std::trunc((v - m) * id + 0.5f)) : std::round(v * id);
        out[a + g + j] = static_cast<float>(code * half(d) + (q4_1 ? half(m) : 0.0f));
      }
    }
  return out;
}
}  // namespace

TEST(GroupRules, RowsOnACommonGroupGridNameTheirLayout) {
  for (std::size_t width : {8, 32, 40, 80}) {
    const std::vector<double> x = gaussian_rows(3, width, static_cast<unsigned>(width));
    EXPECT_EQ(kv::common_group_layout(x, llama_cpp_rows(x, width, false), width), kv::formats::q8_0) << width;
    EXPECT_EQ(kv::common_group_layout(x, llama_cpp_rows(x, width, true), width), kv::formats::q4_1) << width;
    // Rows that are not integer groups: other random doubles, the inputs a little off, fp16 roundings.
    const std::vector<double> other = gaussian_rows(3, width, 99);
    EXPECT_FALSE(kv::common_group_layout(x, other, width)) << width;
    std::vector<double> off = x, half = x;
    for (double& v : off) v *= 1 + 1e-6;
    for (double& v : half) v = kv::round_element(kv::formats::fp16, v);
    EXPECT_FALSE(kv::common_group_layout(x, off, width)) << width;
    EXPECT_FALSE(kv::common_group_layout(x, half, width)) << width;
  }
  EXPECT_EQ(kv::describe(kv::formats::q4_1), "int4 g32 token asym scale=fp16");
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
