// The targeted numeric search (docs/numerics.md §4.4): the worst decodes of the random cases, mutated towards
// err/bound 1.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "properties/generate/run_property.h"
#include "properties/generate/search_moves.h"

namespace kvconform {

/// Hypothesis's target() for the bound: the random cases offer every passing trace, the worst
/// decodes (highest err/bound) are kept, and a budget of mutated traces (search_moves.h) tries to
/// push err/bound past 1. Each trace runs through the same executor as any case, so a port keeps its
/// time limits and the run its deadlines and stops. A trace that fails is a normal failure (shrunk by
/// dropping ops while it fails the same check, when the run shrinks). The search is deterministic
/// for a seed: its own random engine starts from the property's seed, and its starting points are
/// the random cases, which are.
///
/// The budget is spent in two rounds: a first one once `probe_after` cases have passed (four moves,
/// at most half the budget, each in its most revealing regime from the worst decode so far, so that a
/// bug only an arranged input shows is found within a few dozen cases), the rest after all random
/// cases, hill climbing from the worst of the whole run.
class numeric_search {
 public:
  static constexpr int probe_after = 10;  ///< cases before the first round
  numeric_search(const property& p, const implementation& impl, const run_options& o);
  numeric_search(const numeric_search&) = delete;
  numeric_search& operator=(const numeric_search&) = delete;

  /// A random case that passed, whose session ran `ops` on `config`: kept if among the worst; runs
  /// the first round once `probe_after` cases (or all of them, if fewer) have passed.
  void passed(const cache_config& config, const std::vector<op>& ops, const decode_stats& stats);
  /// After the random cases: the first round if it has not run, then the rest of the budget.
  void finish();
  /// A trace of the search failed (or a stop cut it short): no more cases are needed.
  bool done() const { return found_ || stopped_; }
  /// The traces it ran.
  int traces() const { return cases_; }
  /// The cases a failure of its next trace would count less one: the random cases it saw pass (a long case is not
  /// offered to it), and its traces.
  int counted() const { return passed_ + cases_; }
  /// Adds what the search did to `out`: its traces and their statistics; a failure, with the cases
  /// counted up to it (the random cases that passed before it, then the search's), when it found one;
  /// and when a random case failed after the first round, that round's traces to its cases.
  void report(property_run& out) const;

 private:
  void round(int budget, bool first);
  void evaluate(search::candidate c);
  void keep(search::candidate c, double ratio);
  void shrink();

  const property& p_;
  const implementation& impl_;
  const run_options& o_;
  search::random_engine rng_;
  int passed_ = 0, cases_ = 0, found_after_ = 0;
  bool first_done_ = false, found_ = false, stopped_ = false;
  struct entry {
    search::candidate c;
    double ratio = 0;
  };
  std::vector<entry> pool_;  ///< the worst decodes so far, highest err/bound first
  decode_stats stats_;
  std::optional<trace> counterexample_;
  std::optional<failure> fail_;
};

}  // namespace kvconform
