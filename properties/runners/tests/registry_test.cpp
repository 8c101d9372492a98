// The registry is checked: every mutant's killer is a property of its kind; selftest and gate agree on NOT SUPPORTED.
#include <gtest/gtest.h>

#include <sstream>

#include "impls/flat/flat.h"
#include "impls/flat/mutants/kernel_bugs.h"
#include "properties/kinds/flat/adapter.h"
#include "properties/runners/builtin.h"
#include "properties/runners/gate.h"
#include "properties/runners/selftest.h"

namespace kv = kvconform;

TEST(Registry, EveryBuiltinMutantNamesAPropertyOfItsKind) {
  EXPECT_TRUE(kv::registry_problems(kv::builtin_implementations()).empty());
  int mutants = 0;
  for (const kv::implementation& i : kv::builtin_implementations()) {
    if (i.group != kv::impl_group::mutant) continue;
    ++mutants;
    const kv::property* p = kv::find_property(i.killer, i.kind);
    ASSERT_NE(p, nullptr) << i.name << " names " << i.killer;
    EXPECT_FALSE(p->needs.missing_from(i.capabilities)) << i.name << ": its killer needs a capability it lacks";
  }
  EXPECT_GE(mutants, 25);
}

TEST(Registry, AMisspeltOrForeignKillerIsAProblem) {
  const std::vector<kv::implementation> impls = {
      kv::make_implementation<kv::flat>({"typo", kv::impl_group::mutant, "", "exact_fil"}),
      kv::make_implementation<kv::flat>({"foreign", kv::impl_group::mutant, "", "ring_window_last_steps"}),
      kv::make_implementation<kv::flat>({"silent", kv::impl_group::mutant, "", ""}),
      kv::make_implementation<kv::flat>({"typo", kv::impl_group::reference, ""}),
  };
  const auto problems = kv::registry_problems(impls);
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_NE(problems[0].find("exact_fil"), std::string::npos);
  EXPECT_NE(problems[1].find("not a property of the flat kind"), std::string::npos);
  EXPECT_NE(problems[2].find("names no property"), std::string::npos);
  EXPECT_NE(problems[3].find("two implementations"), std::string::npos);
}

TEST(Registry, APolicyTheKindLacksOrAChoiceItsPolicyLacksIsAProblem) {
  auto with = [](const char* name, const char* policy, const char* choice) {
    kv::implementation i = kv::make_implementation<kv::flat>({name, kv::impl_group::reference, ""});
    i.policies.declare(policy, choice);
    return i;
  };
  const auto problems = kv::registry_problems({with("a", "hit_limit", "all"), with("b", "rollback", "never")});
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("the flat kind has no policy \"hit_limit\" (it has none)"), std::string::npos);
  EXPECT_NE(problems[1].find("no policy \"rollback\""), std::string::npos);
  kv::implementation ring = kv::make_implementation<kv::flat>({"r", kv::impl_group::reference, ""});
  ring.kind = kv::cache_kind::ring, ring.policies.declare("rollback", "never");
  const auto ring_problems = kv::registry_problems({ring});
  ASSERT_EQ(ring_problems.size(), 1u);
  EXPECT_NE(ring_problems[0].find("ring policy rollback has no choice \"never\" (its choices: within_reserve, "
                                  "before_full)"),
            std::string::npos);
}

namespace {
/// A flat implementation with its decode capability taken away.
template <class C>
kv::implementation without_decode(std::string name, kv::impl_group group, std::string killer = "") {
  kv::implementation i = kv::make_implementation<C>({std::move(name), group, "", std::move(killer)});
  i.capabilities = {};
  return i;
}
}  // namespace

TEST(Selftest, NotSupportedIsNeitherAFailureForAVariantNorAKillOfAMutant) {
  // The no-scale bug lives only in decode: without decode, nothing can kill it, and selftest must say so.
  const std::vector<kv::implementation> zoo = {
      without_decode<kv::flat>("storage-only", kv::impl_group::variant),
      without_decode<kv::mutants::flat_no_scale>("decode-bug", kv::impl_group::mutant, "exact_fill")};
  kv::run_options o;
  o.cases = 10;
  std::ostringstream log;
  const kv::selftest_report r = kv::run_selftest(zoo, o, 2, log);
  ASSERT_EQ(r.variants.size(), 1u);
  EXPECT_TRUE(r.variants[0].passed) << r.variants[0].message;
  EXPECT_FALSE(r.variants[0].not_supported.empty());
  ASSERT_EQ(r.mutants.size(), 1u);
  EXPECT_EQ(r.mutants[0].killed, 0);  // decode properties are NOT SUPPORTED, not kills
  EXPECT_FALSE(r.ok());
  // The gate reports the same properties as NOT SUPPORTED.
  kv::gate_options g;
  g.run = o, g.store = "";
  const auto gate = kv::run_gate({&zoo[0]}, g, log);
  std::size_t not_supported = 0;
  for (const auto& p : gate[0].properties) not_supported += p.result == kv::status::not_supported;
  EXPECT_EQ(not_supported, r.variants[0].not_supported.size());
}
