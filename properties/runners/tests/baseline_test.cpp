// Baselines: the line format read, applied to a run and written back.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "properties/runners/baseline.h"
#include "properties/runners/builtin.h"

namespace kv = kvconform;

namespace {
std::string written(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& text, const std::vector<const kv::implementation*>& known) {
  const std::string path = written("bad.csv", text);
  std::string error;
  try {
    kv::read_baseline(path, known);
  } catch (const kv::baseline_error& e) {
    error = e.what();
  }
  std::remove(path.c_str());  // nothing left in the temporary folder
  return error;
}
}  // namespace

TEST(Baseline, ReadsEntriesWithCommasInTheReasonAndSkipsComments) {
  const kv::implementation* flat = kv::find_implementation("flat");
  const auto path = written("ok.csv", "\xEF\xBB\xBF# c\r\n\r\n  flat , exact_fill , a, b \r\nflat,copy_semantics,\n");
  const auto entries = kv::read_baseline(path, {flat});
  std::remove(path.c_str());
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].implementation, "flat");
  EXPECT_EQ(entries[0].property, "exact_fill");
  EXPECT_EQ(entries[0].reason, "a, b");
  EXPECT_EQ(entries[0].line, 3u);
  EXPECT_EQ(entries[1].reason, "");
}

TEST(Baseline, NamesTheLineOfEachMistake) {
  const std::vector<const kv::implementation*> known = {kv::find_implementation("flat")};
  EXPECT_NE(error_of("\nflat exact_fill\n", known).find("bad.csv:2: expected"), std::string::npos);
  EXPECT_NE(error_of("ring,exact_fill,x\n", known).find(":1: unknown implementation \"ring\""), std::string::npos);
  EXPECT_NE(error_of("flat,x,y\n", known).find(":1: \"x\" is not a property of \"flat\""), std::string::npos);
  EXPECT_NE(error_of("flat,exact_fill,\nflat,exact_fill,\n", known).find(":2: "), std::string::npos);
}

TEST(Baseline, AppliedAndWrittenBack) {
  const kv::implementation* flat = kv::find_implementation("flat");
  std::vector<kv::impl_report> run(1);
  run[0].impl = flat;
  run[0].properties.resize(3);
  run[0].properties[0].property = "exact_fill", run[0].properties[0].result = kv::status::fail;
  run[0].properties[0].message = "state at append: rows differ\nmore";
  run[0].properties[1].property = "copy_semantics", run[0].properties[1].result = kv::status::fail;
  run[0].properties[1].message = "outcome at append: refused";
  run[0].properties[2].property = "order_preserved";  // passes
  const std::vector<kv::baseline_entry> entries = {{"flat", "copy_semantics", "known bug", 1},
                                                   {"flat", "order_preserved", "fixed since", 2},
                                                   {"flat", "views_filled_rows", "not run", 3}};
  kv::apply_baseline(run, entries);
  EXPECT_EQ(run[0].properties[0].result, kv::status::fail);
  EXPECT_EQ(run[0].properties[1].result, kv::status::known_failure);
  EXPECT_TRUE(run[0].properties[2].fixed());
  EXPECT_EQ(kv::fixed_cells(run), 1u);
  const std::string text = kv::baseline_text(run, entries);
  EXPECT_NE(text.find("\nflat,copy_semantics,known bug\nflat,exact_fill,state at append: rows differ\n"
                      "flat,views_filled_rows,not run\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("order_preserved"), std::string::npos);
}
