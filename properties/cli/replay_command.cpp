// `kvconform replay`: saved traces run again, each on the implementation it names or the one given.
#include <iostream>
#include <memory>

#include "properties/cli/subcommand.h"
#include "properties/executor/stop.h"
#include "properties/generate/run_property.h"
#include "properties/runners/store.h"
#include "properties/trace/trace_json.h"
#include "properties/trace/utf8.h"

namespace kvconform::cli {

namespace {
/// Prints a replay's FAIL line: the failure, and the op it happened at (or past the saved ops, for a driver).
void print_failure(const std::string& file, const implementation& impl, const trace& t, const failure& fail) {
  const std::size_t at = fail.op_index;
  std::cout << "FAIL " << valid_utf8(file) << " on " << impl.name << ": " << fail.signature() << ": "
            << valid_utf8(fail.message) << "\n  at op " << at << " of " << t.ops.size() << ": "
            << (at < t.ops.size() ? describe(t.ops[at])
                : t.drive_seed    ? fail.op_name + ", which the driver ran past the saved ops"
                                  : fail.op_name)
            << "\n";
}

struct replay_flags {
  std::vector<std::string> files;
  std::string impl;
};
}  // namespace

int replay_traces(const command_line& cmd, const std::vector<std::string>& files, const std::string& impl_override,
                  const implementation* fixed, int deadline_s) {
  int rc = exit_pass;
  for (const std::string& file : files) {
    const trace t = load_trace(file);
    const std::string name = impl_override.empty() ? t.implementation : impl_override;
    if (name.empty() && !fixed) throw usage_error(file + ": the trace names no implementation; pass --impl NAME");
    const implementation& impl = fixed ? *fixed : cmd.named(name);
    const property* p = replay_property(t, impl, file);
    // A trace recorded under what the cache no longer declares holds it to nothing (docs/design.md §2.4).
    std::string skip = undeclared(t, impl);
    if (deadline_s > 0) set_property_deadline(deadline_clock::now() + std::chrono::seconds(deadline_s));
    const verdict v = skip.empty() ? check_trace(p, t, impl) : verdict{};
    set_property_deadline(std::nullopt);
    if (v.fail && v.fail->check == "not-supported") skip = v.fail->message;
    if (!skip.empty()) {
      std::cout << "SKIPPED " << valid_utf8(file) << " on " << impl.name << ": " << valid_utf8(skip) << "\n";
      continue;
    }
    if (v.ok()) {
      std::cout << "PASS " << file << " on " << impl.name << " (" << t.ops.size() << " ops)\n";
      continue;
    }
    rc = exit_fail;
    print_failure(file, impl, t, *v.fail);
    if (stopped_early(*v.fail)) break;
  }
  return rc;
}

subcommand add_replay(CLI::App& app, const command_line& cmd) {
  auto f = std::make_shared<replay_flags>();
  CLI::App* sub = app.add_subcommand("replay", "Replay saved traces; exit 1 if any still fails");
  sub->add_option("files", f->files, "Trace files")->required();
  sub->add_option("--impl", f->impl, "Run on this implementation instead of the one the trace names");
  return {sub, [f, &cmd] { return replay_traces(cmd, f->files, f->impl); }};
}

}  // namespace kvconform::cli
