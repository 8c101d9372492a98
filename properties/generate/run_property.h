// Running a property on an implementation: a fixed trace, or generated cases that shrink on failure.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "properties/generate/property.h"

namespace kvconform {

/// Sizes and counts of one run. `deep` widens capacities and dimensions for nightly runs.
struct run_options {
  int cases = 100;
  int max_size = 40;
  std::uint64_t seed = 1;
  bool deep = false;
  bool shrink = true;             ///< off when only the number of cases to a failure matters (selftest)
  bool production_shapes = true;  ///< production and long cases (docs/design.md §4.4); off: small only
  /// Traces the targeted numeric search runs per property that has it (docs/numerics.md §4.4; 0: none).
  int search = 12;
  /// Stop once no case could fail within this many (counted as property_run::cases counts them; 0: no limit): up to
  /// there the run is the same, so a failure it finds is the unlimited run's, and one the unlimited run finds within
  /// the limit it finds too. Selftest's properties after the first kill need only find out whether they kill sooner.
  int case_limit = 0;
  std::function<void(const trace&)> on_trace;  ///< sees every generated trace that passed (seed corpora)
};

/// The result of one property on one implementation.
struct property_run {
  int cases = 0;       ///< generated cases run, up to and including the first failing one (search traces included)
  decode_stats stats;  ///< over the random cases
  /// The boundary events of the cases run (up to and including the first failing one, not the shrinking).
  coverage_counts coverage;
  class_histograms ratios;              ///< err/bound of the same cases' decodes, by input class
  int search_cases = 0;                 ///< traces the targeted numeric search ran
  decode_stats search_stats;            ///< over those traces
  bool searched = false;                ///< the failure is a trace of the search
  std::optional<trace> counterexample;  ///< shrunk to a minimal trace
  std::optional<failure> fail;
  std::string error;  ///< the generator gave up or RapidCheck reported an internal error
};

/// Runs `p` on `impl`: one fixed trace, or `cases` generated traces that shrink on failure.
property_run run_property(const property& p, const implementation& impl, const run_options& o);

/// The seed a property runs with: the run's seed mixed with the property name, so each
/// property's traces stay the same when others are added.
std::uint64_t property_seed(std::uint64_t run_seed, const std::string& property);

/// Whether each config size `impl` limits (a port's, docs/port-protocol.md §3) is within its limit: generated
/// configs are clamped to them, and a search trace lengthened past them is not run.
bool within_limits(const cache_config& c, const implementation& impl);
/// Why a saved trace does not hold `impl` to anything: recorded under other policies, or on a config beyond the
/// sizes it declares ("" when it applies). A capability it no longer declares shows when the trace runs, as an
/// op it answers not-supported (docs/design.md §2.4).
std::string undeclared(const trace& t, const implementation& impl);

}  // namespace kvconform
