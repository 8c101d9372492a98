// A command built without the zoo (KVCONFORM_ZOO off, docs/design.md §3.3) says so where a user meets it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "properties/cli/cli.h"
#include "properties/runners/builtin.h"

namespace kv = kvconform;

namespace {
/// The exit code and standard error of `kvconform ARGS` over the references alone, with `left_out` said.
std::pair<int, std::string> run_references_only(std::vector<std::string> args, const std::string& left_out) {
  std::vector<kv::implementation> refs;
  std::copy_if(kv::builtin_implementations().begin(), kv::builtin_implementations().end(), std::back_inserter(refs),
               [](const kv::implementation& i) { return i.group == kv::impl_group::reference; });
  args.insert(args.begin(), "kvconform");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  const int code = kv::run_cli(static_cast<int>(argv.size()), argv.data(), refs, "test", left_out);
  return {code, testing::internal::GetCapturedStderr()};
}
}  // namespace

TEST(LeftOut, SelftestWithoutTheZooIsAUsageErrorSayingHowToBuildIt) {
  const auto [code, err] = run_references_only({"selftest"}, "the zoo is not in this build");
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("no mutants or valid variants to run: the zoo is not in this build"), std::string::npos) << err;
}

TEST(LeftOut, AZooNameIsUnknownWithTheReason) {
  const auto [code, err] = run_references_only({"gate", "--impl", "flat-strict-capacity"}, "the zoo is not here");
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("unknown implementation \"flat-strict-capacity\""), std::string::npos) << err;
  EXPECT_NE(err.find("; the zoo is not here"), std::string::npos) << err;
}
