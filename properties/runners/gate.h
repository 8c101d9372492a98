// The gate: every selected property on every selected implementation, with a regression store.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "properties/generate/run_property.h"

namespace kvconform {

/// A cell's result; INTERRUPTED marks the cell a signal stopped (the matrix ends there).
enum class status { pass, fail, not_supported, interrupted };
const char* to_string(status s);

/// One cell of the matrix.
struct property_report {
  std::string property;
  status result = status::pass;
  int cases = 0;
  decode_stats stats;
  coverage_counts coverage;  ///< the boundary events its generated cases hit (--stats)
  std::optional<failure> fail;
  std::optional<trace> counterexample;
  std::string message;     ///< failure or NOT SUPPORTED reason
  std::string saved_path;  ///< where the failing trace was written
  std::string save_error;  ///< why it could not be written (a full disk): the run then exits 2
  std::string stopped;     ///< why the run stopped at this cell (a signal, the run's deadline), or ""
  std::string replay;      ///< the command that replays it
  std::string source;      ///< "generated", "fixed", or the stored trace that still fails
  double seconds = 0;
};

struct impl_report {
  const implementation* impl = nullptr;
  std::vector<property_report> properties;
  /// The coverage guard held this row to its kind's required events (docs/design.md §4.6): a quick
  /// run of every property of the kind, none failed. `missing` names those no trace hit, and
  /// `rerun` is the command that shows the statistics again.
  bool guarded = false;
  std::vector<std::string> missing;
  std::string rerun;
};

/// A share of the matrix for one CI runner: the cells k (counted in matrix order) with
/// k mod count == index. The shards' union is the whole matrix, and no cell is in two.
struct shard_spec {
  std::size_t index = 0, count = 1;
  bool has(std::size_t cell) const { return cell % count == index; }
};

struct gate_options {
  run_options run;
  std::string property_glob = "*";
  int jobs = 1;      ///< cells run at once, each in its own worker process (properties/runners/parallel.h)
  shard_spec shard;  ///< this runner's share of the matrix
  std::string store = "kvconform-failures";  ///< "" disables the store
  double deadline_s = 0;                     ///< each property's deadline in seconds (0: none)
  /// Hold every whole row to its kind's required events (the quick profile's cases and sizes or more).
  bool coverage_guard = false;
  /// The command that runs an implementation's row again with the coverage statistics.
  std::function<std::string(const implementation&)> rerun_hint = [](const implementation& i) {
    return "kvconform gate --impl " + i.name + " --stats";
  };
  /// The command that replays a saved trace, with the runner that was actually run.
  std::function<std::string(const std::string& path)> replay_hint = [](const std::string& path) {
    return "kvconform replay " + path;
  };
};

/// What is wrong with a registry, one line each: a mutant without a registered killer, or one
/// whose killer is not a property of its kind; a name used twice.
std::vector<std::string> registry_problems(const std::vector<implementation>& impls);

/// Runs the gate. The store is opened and every stored trace the run will replay is checked
/// first (file_error or trace_format_error before any test). Stored failures for an
/// (implementation, property) are replayed first; a stored trace that still fails is the
/// result, otherwise cases are generated. Every new failing minimal trace is saved as soon as it
/// is found. A signal ends the matrix at an INTERRUPTED cell; a property past its deadline is a
/// FAIL with the check "deadline", and past the run's deadline the matrix ends there (docs/reliability.md).
/// With jobs > 1 the cells run in worker processes, and the result is the same as with one job, in
/// the same order. Progress lines go to `log`.
std::vector<impl_report> run_gate(const std::vector<const implementation*>& impls, const gate_options& o,
                                  std::ostream& log);

/// The matrix, the failure details with replay commands, the coverage gaps, and an "N passed, N
/// failed" line.
void print_report(const std::vector<impl_report>& r, std::ostream& out);
/// Per implementation, how many traces of each property hit each event of its kind (`gate --stats`).
void print_coverage(const std::vector<impl_report>& r, std::ostream& out);
/// Marks the rows the guard holds (whole rows of a guarded run, none failed) and names their
/// required events that no trace hit.
void guard_coverage(std::vector<impl_report>& r, const gate_options& o);
/// Required events that no trace of a guarded row hit, over the whole run.
std::size_t coverage_gaps(const std::vector<impl_report>& r);
void write_junit(const std::vector<impl_report>& r, const std::string& path);
void write_json(const std::vector<impl_report>& r, const std::string& path);
bool any_failed(const std::vector<impl_report>& r);
/// Why the matrix is partial ("interrupted by SIGTERM", "the run's deadline passed ..."), or "".
std::string partial_reason(const std::vector<impl_report>& r);
/// Writes the JUnit and JSON reports (each tried even if the other fails) and prints to `err` each
/// report, and each failure of the run, that could not be written (a full or failing disk); false
/// if anything was lost.
bool write_report_files(const std::vector<impl_report>& r, const std::string& junit, const std::string& json,
                        std::ostream& err);

}  // namespace kvconform
