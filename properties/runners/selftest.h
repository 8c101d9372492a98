// The harness self-test: every mutant must be killed, every valid variant must pass.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "properties/generate/run_property.h"

namespace kvconform {

/// How one mutant fared over several seeds.
struct mutant_result {
  const implementation* impl = nullptr;
  int seeds = 0, killed = 0;        ///< seeds run, seeds on which some property failed
  std::string first_killer;         ///< the property that failed after the fewest cases (most often)
  std::vector<int> cases_to_kill;   ///< per killing seed: fewest cases any property needed
  int expected_killer_median = -1;  ///< median cases of the registered killer (-1: it never failed)
  int median() const;
  int worst() const;
};

/// How one valid variant fared on the full gate.
struct variant_result {
  const implementation* impl = nullptr;
  bool passed = true;
  std::string failed_property, message;
  double worst_ratio = 0;
  std::vector<std::string> not_supported;  ///< properties it lacks a capability for (neither pass nor fail)
};

struct selftest_report {
  std::vector<mutant_result> mutants;
  std::vector<variant_result> variants;
  int median_cases_to_kill() const;
  int worst_cases_to_kill() const;
  bool ok() const;  ///< every mutant killed on every seed, every variant PASS with worst err/bound <= 0.5
};

/// Runs the zoo among `impls`: every property on every mutant for `seeds` seeds (no shrinking:
/// only the number of cases matters), and the full gate on every variant.
selftest_report run_selftest(const std::vector<implementation>& impls, const run_options& base, int seeds,
                             std::ostream& log);
void print_selftest(const selftest_report& r, std::ostream& out);
void write_selftest_json(const selftest_report& r, const std::string& path);

}  // namespace kvconform
