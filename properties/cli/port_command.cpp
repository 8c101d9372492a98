// `kvconform port`: the gate (or a replay) over a cache in another process or behind the C ABI.
#include <memory>

#include "properties/cli/subcommand.h"
#include "properties/executor/stop.h"
#include "properties/port/library.h"
#include "properties/port/port.h"
#include "properties/trace/kind_spec.h"

namespace kvconform::cli {

namespace {
struct port_flags {
  run_flags run;
  std::string kind, library;
  std::vector<std::string> replay;
  port_options port;
};

/// The port as an implementation: its command's process, or the library.
implementation port_implementation(const port_flags& f) {
  const cache_kind kind = *kind_from_string(f.kind);
  if (f.library.empty() == f.port.command.empty())
    throw usage_error("port: give either --library PATH or the port's command after --");
  try {
    return f.library.empty() ? make_port_implementation(kind, f.port) : make_library_implementation(kind, f.library);
  } catch (const std::invalid_argument& e) {
    throw usage_error("port: " + std::string(e.what()));
  }
}

int run_port(const command_line& cmd, const port_flags& f) {
  const implementation impl = port_implementation(f);
  if (!f.replay.empty()) {
    set_run_deadline(deadline_clock::now() + std::chrono::seconds(f.run.run_deadline_s));
    return replay_traces(cmd, f.replay, "", &impl, f.run.deadline_s);
  }
  // The port's own command line with `flags` before its command.
  const auto port_words = [&](std::vector<std::string> flags) {
    std::vector<std::string> words = {cmd.runner(), "port", "--kind", f.kind};
    words.insert(words.end(), flags.begin(), flags.end());
    if (!f.library.empty())
      words.insert(words.end(), {"--library", f.library});
    else
      words.push_back("--"), words.insert(words.end(), f.port.command.begin(), f.port.command.end());
    return shell_words(words);
  };
  return run_gate_command(
      cmd, f.run, {&impl},
      [&](const std::string& path) {
        return port_words({"--replay", path});
      },
      [&](const implementation&, std::uint64_t seed) {
        return port_words({"--seed", std::to_string(seed), "--stats"});
      });
}
}  // namespace

subcommand add_port(CLI::App& app, const command_line& cmd, std::vector<std::string> port_command) {
  auto f = std::make_shared<port_flags>();
  f->port.command = std::move(port_command);
  CLI::App* sub =
      app.add_subcommand("port",
                         "Drive a cache in another language over the line protocol (docs/port-protocol.md): "
                         "port [options] -- COMMAND [ARGS...]");
  sub->add_option("--kind", f->kind, "Cache kind the port implements")
      ->required()
      ->check(CLI::IsMember(kind_name_list()));
  f->run.add_to(sub);
  sub->add_option("--timeout-ms", f->port.timeout_ms, "Time limit per request")
      ->check(CLI::Range(1, 3600000))
      ->capture_default_str();
  sub->add_option("--library", f->library, "Load a cache behind the C ABI of <kvconform/c_port.h> instead of a command");
  sub->add_option("--replay", f->replay, "Replay this trace file on the port instead of generating (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return {sub, [f, &cmd] { return run_port(cmd, *f); }};
}

}  // namespace kvconform::cli
