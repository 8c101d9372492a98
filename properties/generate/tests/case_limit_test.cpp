// run_options::case_limit: a run is the same as without it up to the limit, and runs no case past it (selftest).
#include <gtest/gtest.h>

#include <string>

#include "properties/generate/property.h"
#include "properties/generate/run_property.h"
#include "properties/runners/builtin.h"

namespace kv = kvconform;

namespace {
struct killed_late {
  const char* mutant;
  const char* property;
  std::uint64_t seed;
};
// Mutants that a property kills after several cases, one of them through the targeted numeric search's traces.
constexpr killed_late cases[] = {{"flat-partial-write", "refused_append_unchanged", 1},
                                 {"flat-max-first-32-rows", "large_scores", 2},
                                 {"flat-drop-tiny-weights", "decode_within_bound", 1}};
}  // namespace

TEST(CaseLimit, SameRunUpToTheLimit) {
  for (const killed_late& c : cases) {
    SCOPED_TRACE(std::string(c.mutant) + " / " + c.property + ", seed " + std::to_string(c.seed));
    const kv::implementation* impl = kv::find_implementation(c.mutant);
    ASSERT_NE(impl, nullptr);
    const kv::property* p = kv::find_property(c.property, impl->kind);
    ASSERT_NE(p, nullptr);
    kv::run_options o;
    o.seed = c.seed, o.shrink = false;
    const kv::property_run whole = kv::run_property(*p, *impl, o);
    ASSERT_TRUE(whole.fail);
    ASSERT_GE(whole.cases, 2);
    o.case_limit = whole.cases;
    const kv::property_run at = kv::run_property(*p, *impl, o);
    ASSERT_TRUE(at.fail);
    EXPECT_EQ(at.cases, whole.cases);
    EXPECT_EQ(at.searched, whole.searched);
    EXPECT_EQ(at.fail->signature(), whole.fail->signature());
    EXPECT_EQ(at.fail->message, whole.fail->message);
    o.case_limit = whole.cases - 1;  // the run stops before that failure, or runs on to it: then it is the same
    const kv::property_run before = kv::run_property(*p, *impl, o);
    EXPECT_TRUE(before.error.empty()) << before.error;
    if (before.fail) {
      EXPECT_EQ(before.cases, whole.cases);
      EXPECT_EQ(before.fail->message, whole.fail->message);
    } else {
      EXPECT_LE(before.search_cases, whole.search_cases);
    }
  }
}

TEST(CaseLimit, OneKillerThroughTheSearch) {  // the list above must exercise the search's own limit
  bool searched = false;
  for (const killed_late& c : cases) {
    kv::run_options o;
    o.seed = c.seed, o.shrink = false;
    const kv::implementation* impl = kv::find_implementation(c.mutant);
    ASSERT_NE(impl, nullptr);
    searched = searched || kv::run_property(*kv::find_property(c.property, impl->kind), *impl, o).searched;
  }
  EXPECT_TRUE(searched) << "no case of the list fails in a search trace: pick one that does";
}

TEST(CaseLimit, APassingRunStopsAtTheLimit) {
  const kv::implementation* impl = kv::find_implementation("flat");
  ASSERT_NE(impl, nullptr);
  const kv::property* p = kv::find_property("decode_within_bound", impl->kind);
  ASSERT_NE(p, nullptr);
  kv::run_options o;
  o.shrink = false;
  const kv::property_run whole = kv::run_property(*p, *impl, o);
  o.case_limit = 3;
  const kv::property_run limited = kv::run_property(*p, *impl, o);
  ASSERT_FALSE(whole.fail || limited.fail);
  EXPECT_EQ(whole.coverage.traces, 100u);
  EXPECT_GT(whole.search_cases, 0);
  // One case past the limit at most: a long case is not offered to the search, whose traces could still come.
  EXPECT_LE(limited.coverage.traces, 4u);
  EXPECT_EQ(limited.search_cases, 0);
}
