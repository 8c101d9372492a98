// Counts, seeds and RC_PARAMS: digits only, within range, each key once, unknown keys refused.
#include <gtest/gtest.h>

#include "properties/cli/run_params.h"

namespace kv = kvconform;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kv::params_error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(RunParams, CountsAreDecimalDigitsWithinTheirRange) {
  EXPECT_EQ(kv::parse_count("0", "x", 0, 5), 0u);
  EXPECT_EQ(kv::parse_count("18446744073709551615", "x", 0, UINT64_MAX), UINT64_MAX);
  for (const char* bad :
       {"", "-1", "+1", " 1", "1.5", "1e3", "0x10", "18446744073709551616", "99999999999999999999999"})
    EXPECT_NE(error_of([&] { kv::parse_count(bad, "--seed", 0, UINT64_MAX); }).find("is not an integer in [0, "),
              std::string::npos)
        << bad;
  EXPECT_EQ(error_of([] { kv::parse_count("7", "--cases", 1, 5); }), "--cases: \"7\" is not an integer in [1, 5]");
}

TEST(RunParams, RcParamsAreCheckedKeyByKey) {
  const kv::rc_params p = kv::parse_rc_params(" seed=7\tmax_success=3 max_size=20 noshrink ");
  EXPECT_EQ(*p.seed, 7u);
  EXPECT_EQ(*p.max_success, 3);
  EXPECT_EQ(*p.max_size, 20);
  EXPECT_TRUE(p.noshrink);
  EXPECT_FALSE(kv::parse_rc_params("").seed);
  EXPECT_NE(error_of([] { kv::parse_rc_params("max_success=0"); }).find("RC_PARAMS max_success: \"0\""),
            std::string::npos);
  EXPECT_NE(error_of([] { kv::parse_rc_params("max_size=1001"); }).find("[1, 1000]"), std::string::npos);
  EXPECT_NE(error_of([] { kv::parse_rc_params("seed=1 seed=2"); }).find("given twice"), std::string::npos);
  EXPECT_NE(error_of([] { kv::parse_rc_params("verbose_progress=1"); }).find("unknown key \"verbose_progress\""),
            std::string::npos);
  EXPECT_NE(error_of([] { kv::parse_rc_params("seed=-1"); }).find("RC_PARAMS seed"), std::string::npos);
}
