// The format check's hint: rows declared f64 that lie on a common integer group grid name the layout to declare,
// whether the cache exposes its scales or not; other rows get no layout.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "properties/executor/format_check.h"

namespace kv = kvconform;

namespace {
constexpr std::size_t width = 40;  // two groups of 32 along d: a full one and a short one

/// One stream of one row of keys (and one value).
kv::snapshot one_row(const std::vector<double>& keys) {
  kv::stream st;
  st.d_k = width, st.d_v = 1;
  st.keys = keys, st.values = std::vector<double>{1.0};
  kv::snapshot s;
  s.streams.push_back(st);
  return s;
}
}  // namespace

TEST(FormatCheck, RowsOnAnIntegerGridDeclaredF64NameTheLayout) {
  // q8_0 with the fp16 scale 2^-6 in both groups: each group's largest magnitude exactly 127 steps, the other
  // inputs a quarter step off their codes.
  const double d = 0x1p-6;
  std::vector<double> given(width), stored(width);
  for (std::size_t j = 0; j < width; ++j) {
    const double code = j % 32 == 0 ? 127 : static_cast<double>(static_cast<long>(j * 37 % 241) - 120);
    stored[j] = code * d;
    given[j] = stored[j] + (j % 32 == 0 ? 0 : j % 2 ? 0.25 * d : -0.25 * d);
  }
  kv::snapshot expected = one_row(given);
  kv::snapshot observed = one_row(stored);
  kv::format_checker check(kv::numeric_profile{}, kv::cache_config{.capacity = 1, .d_k = width, .d_v = 1});
  const std::string layout = "the stored rows lie on the grid of int8 g32 token sym scale=fp16: declare that format";
  EXPECT_EQ(check.hint(expected, observed), " (keys are declared f64, but " + layout + ")");
  // The same cache exposing its scales fails the format check, with the same layout.
  observed.streams[0].key_groups.scales = {d, d};
  const auto problem = check.check_state(expected, observed);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->message, "the cache exposes 2 key scales, but keys are declared f64; " + layout);
  // Rows a little off their inputs, not on a grid: the declaration only.
  std::vector<double> off = given;
  for (double& x : off) x *= 1 + 0x1p-30;
  EXPECT_EQ(check.hint(expected, one_row(off)), " (keys are declared f64)");
}

TEST(FormatCheck, SlidingStreamsNameTheSlidingGroupsFormat) {
  // A hybrid profile: bf16 rows, fp8 ones in the sliding group. A row of 1 + 2^-5 is exact in bf16, not in e4m3.
  kv::numeric_profile p;
  p.keys = p.values = kv::formats::bf16;
  p.sliding_keys = p.sliding_values = kv::formats::e4m3;
  kv::format_checker check(p, kv::cache_config{.capacity = 1, .d_k = width, .d_v = 1});
  const std::vector<double> row(width, 1.03125);
  std::vector<double> other = row;
  other[0] = 1.0;
  kv::snapshot expected = one_row(row);
  EXPECT_EQ(check.hint(expected, one_row(other)).rfind(" (keys are declared bf16:", 0), 0u);
  expected.streams[0].sliding = true;
  EXPECT_EQ(check.hint(expected, one_row(other)).rfind(" (keys are declared e4m3:", 0), 0u);
}
