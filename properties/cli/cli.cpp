// The kvconform command line over a list of implementations: its subcommands (NAME_command.cpp) on one CLI11 app.
#include "properties/cli/cli.h"

#include <CLI/CLI.hpp>

#include <csignal>
#include <iostream>

#include "properties/cli/subcommand.h"
#include "properties/executor/stop.h"
#include "properties/runners/gate.h"
#include "properties/trace/trace_json.h"
#include "properties/trace/utf8.h"

namespace kvconform {

namespace cli {
namespace {

/// Runs the subcommand given; every error is a message and exit 2, never an abort.
int run_guarded(const std::vector<subcommand>& subs) {
  try {
    for (const subcommand& s : subs)
      if (*s.app) return s.run();
  } catch (const usage_error& e) {
    std::cerr << "kvconform: " << valid_utf8(e.what()) << "\n";
  } catch (const trace_format_error& e) {
    std::cerr << "kvconform: malformed trace: " << valid_utf8(e.what()) << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "kvconform: out of memory: the input asks for more than this machine can hold\n";
  } catch (const std::exception& e) {
    std::cerr << "kvconform: " << valid_utf8(e.what()) << "\n";
  }
  return exit_usage;
}

/// The exit code once the command is done: 128 + the signal that stopped it, 2 when standard
/// output could not take the whole report, else the command's.
int final_code(int code) {
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "kvconform: cannot write the report to standard output\n";
    code = exit_usage;
  }
  if (const int sig = stop_signal(); sig != 0) {
    std::cerr << "kvconform: " << describe(stop_reason::signal) << "; the results above are partial\n";
    return 128 + sig;
  }
  return code;
}

/// Everything after the first "--" is the port's command line, kept away from CLI11 (an option with
/// values right before "--" would otherwise take the command's own flags): returns it and ends argv there.
std::vector<std::string> take_port_command(int& argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--") {
      std::vector<std::string> command(argv + i + 1, argv + argc);
      argc = i;
      return command;
    }
  return {};
}
}  // namespace
}  // namespace cli

int run_cli(int argc, char** argv, const std::vector<implementation>& impls, const std::string& description,
            const std::string& left_out) {
  using namespace cli;
  if (const auto problems = registry_problems(impls); !problems.empty()) {
    for (const std::string& p : problems) std::cerr << "kvconform: " << p << "\n";
    return exit_usage;
  }
  // A port that exits makes writes fail with EPIPE, a file size limit makes them fail with EFBIG:
  // errors to report, not signals that end the run. SIGINT and SIGTERM stop it at an op boundary.
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);
  install_stop_handlers();
  const command_line cmd(impls, argc > 0 ? argv[0] : "kvconform", left_out);
  CLI::App app{description};
  app.require_subcommand(1);
  std::vector<std::string> port_command = take_port_command(argc, argv);
  const std::vector<subcommand> subs = {add_list(app, cmd),
                                        add_gate(app, cmd),
                                        add_selftest(app, cmd),
                                        add_replay(app, cmd),
                                        add_port(app, cmd, std::move(port_command)),
                                        add_vectors(app, cmd),
                                        add_schema(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? exit_pass : exit_usage;  // help is a success, anything else a usage error
  }
  return final_code(run_guarded(subs));
}

}  // namespace kvconform
