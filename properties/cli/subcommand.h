// What the command line's subcommands share: exit codes, usage errors, the runner, and each subcommand's entry.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "properties/cli/cli_flags.h"
#include "properties/executor/subject.h"

namespace kvconform::cli {

/// exit_fixed: nothing failed that the baseline does not list, but a cell it lists passed (docs/reliability.md §1).
inline constexpr int exit_pass = 0, exit_fail = 1, exit_usage = 2, exit_fixed = 3;

/// An input the parser cannot judge (an unknown implementation, a glob that selects nothing, ...):
/// its message and exit 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One runner's command line: the implementations it knows and the name it was run by.
class command_line {
 public:
  command_line(const std::vector<implementation>& impls, std::string runner, std::string left_out = {})
      : impls_(impls), runner_(std::move(runner)), left_out_(std::move(left_out)) {}
  const std::vector<implementation>& impls() const { return impls_; }
  /// The implementation called `name`; a usage error that lists the known names otherwise.
  const implementation& named(const std::string& name) const;
  /// What this build leaves out and how to build it (run_cli), or empty.
  const std::string& left_out() const { return left_out_; }
  /// How the runner was called (argv[0]), so that a replay hint names the runner actually run.
  const std::string& runner() const { return runner_; }

 private:
  const std::vector<implementation>& impls_;
  std::string runner_, left_out_;
};

/// The shell-quoted words of a command line, for a replay hint.
std::string shell_words(const std::vector<std::string>& words);
/// The kind table's names, which every --kind option accepts.
std::vector<std::string> kind_name_list();

/// A registered subcommand: its CLI11 app, and what runs it once the arguments are parsed into its options.
struct subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

/// The subcommands, each in its own NAME_command.cpp; the command line registers them in this order, which
/// `--help` shows. `port_command` is the port's command line, the words after the first "--".
subcommand add_list(CLI::App& app, const command_line& cmd);
subcommand add_gate(CLI::App& app, const command_line& cmd);
subcommand add_selftest(CLI::App& app, const command_line& cmd);
subcommand add_replay(CLI::App& app, const command_line& cmd);
subcommand add_port(CLI::App& app, const command_line& cmd, std::vector<std::string> port_command);
subcommand add_vectors(CLI::App& app, const command_line& cmd);
subcommand add_schema(CLI::App& app);

/// What replays a saved failure (`replay_hint`) and what runs an implementation's row again with the
/// statistics for a seed (a coverage gap's hint): the gate's and the port's own command lines.
using replay_words = std::function<std::string(const std::string& path)>;
using rerun_words = std::function<std::string(const implementation&, std::uint64_t seed)>;

/// Runs the gate over `selected` (default: the --impl names, else every reference), prints the matrix and
/// writes the reports; `port` runs its one implementation through it.
int run_gate_command(const command_line& cmd, const run_flags& f, std::vector<const implementation*> selected,
                     replay_words hint, rerun_words rerun);

/// Replays trace files, each on the implementation it names, on `impl_override`, or on `fixed`, each
/// within `deadline_s` (0: none); `port --replay` runs its port through it.
int replay_traces(const command_line& cmd, const std::vector<std::string>& files, const std::string& impl_override,
                  const implementation* fixed = nullptr, int deadline_s = 0);

}  // namespace kvconform::cli
