// The options `gate` and `port` share, as CLI11 options (included by the command line only: CLI11 is heavy).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "properties/cli/run_params.h"

namespace kvconform {

/// A CLI11 check that a value is a decimal integer in [min, max] (parse_count's message).
inline CLI::Validator count_in(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) {
        try {
          parse_count(text, "value", min, max);
          return std::string();
        } catch (const params_error& e) {
          return std::string(e.what()).substr(7);  // without "value: "; CLI11 names the option
        }
      },
      "");  // the help text names the range
}
inline constexpr std::uint64_t any_seed = std::numeric_limits<std::uint64_t>::max(), max_deadline_s = 604800;  // a week

/// The options `gate` and `port` share: what to run, how much, and where the reports go.
struct run_flags {
  std::vector<std::string> impls;
  std::string property = "*", profile = "quick", junit, json, html, store = "kvconform-failures", kind;
  std::string baseline, write_baseline;  // known failures read, and written from the run (README, "Baselines")
  std::optional<std::uint64_t> seed;
  std::optional<int> cases;
  std::optional<int> search;  // traces of the targeted numeric search per property (default: the profile's)
  int jobs = 1;  // gate: -j, default the CPUs; a port is one outside program, driven one property at a time
  std::string shard;
  int deadline_s = 1800, run_deadline_s = 14400;  // docs/reliability.md, "Deadlines"
  bool stats = false;                             // print the coverage statistics (docs/design.md §4.6)

  void add_to(CLI::App* cmd) {
    cmd->add_option("--shard", shard,
                    "Run only shard I of N (I/N, 0-based; default GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS if set)");
    cmd->add_option("--property", property, "Glob over property names")->capture_default_str();
    cmd->add_option("--profile", profile, "quick (every commit) or deep (nightly)")
        ->check(CLI::IsMember({"quick", "deep"}))
        ->capture_default_str();
    cmd->add_option("--seed", seed, "Base seed (default 1, or RC_PARAMS seed)")->check(count_in(0, any_seed));
    cmd->add_option("--cases", cases, "Generated cases per property, 1 to 1000000")->check(count_in(1, max_cases));
    cmd->add_option("--search", search,
                    "Traces of the targeted numeric search per decode property, 0 to 1000000 (0: none; default 12 "
                    "quick, 100 deep)")
        ->check(count_in(0, max_cases));
    cmd->add_option("--deadline-s", deadline_s, "Seconds each property may take, 1 to 604800; then it FAILs")
        ->check(count_in(1, max_deadline_s))
        ->capture_default_str();
    cmd->add_option("--run-deadline-s", run_deadline_s, "Seconds the run may take, 1 to 604800; the matrix ends there")
        ->check(count_in(1, max_deadline_s))
        ->capture_default_str();
    cmd->add_option("--junit", junit, "Write JUnit XML here");
    cmd->add_option("--json", json, "Write a JSON report here");
    cmd->add_option("--html", html, "Write a self-contained HTML report here (matrix, failures, coverage, histograms)");
    cmd->add_option("--baseline", baseline,
                    "Known failures (implementation,property,reason a line): they fail no run; a new failure "
                    "does, and a listed cell that passes is FIXED (exit 3)");
    cmd->add_option("--write-baseline", write_baseline,
                    "Write the run's failures here as a baseline (with --baseline, its entries for cells not judged "
                    "are kept)");
    cmd->add_option("--store", store, "Regression store directory (\"\" disables)")->capture_default_str();
    cmd->add_flag("--stats", stats, "Print how many traces of each property hit each boundary event of its kind");
  }
};

}  // namespace kvconform
