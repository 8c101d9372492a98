// The kvconform command line over a list of implementations: list, gate, replay, selftest.
#include <CLI/CLI.hpp>
#include <rapidcheck/detail/Configuration.h>

#include <cstdlib>
#include <iostream>

#include "properties/runners/gate.h"
#include "properties/runners/cli.h"
#include "properties/port/port.h"
#include "properties/vectors/vectors.h"
#include "properties/runners/selftest.h"
#include "properties/trace/trace_json.h"

namespace kvconform {

namespace kv = kvconform;

namespace {
constexpr int exit_pass = 0, exit_fail = 1, exit_usage = 2;

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The implementations this runner knows (built-in, or one suite's).
const std::vector<implementation>* known = nullptr;

const kv::implementation& implementation_named(const std::string& name) {
  for (const auto& i : *known)
    if (i.name == name) return i;
  std::string names;
  for (const auto& i : *known) names += (names.empty() ? "" : ", ") + i.name;
  throw usage_error("unknown implementation \"" + name + "\" (known: " + names + ")");
}

/// Run options for a profile; RC_PARAMS (seed, max_success, max_size) still steers RapidCheck.
/// Without RC_PARAMS, RapidCheck would announce a random seed this run does not use, so it is
/// told the one in use.
run_options options_for(const std::string& profile) {
  run_options o;
  if (profile == "deep") o.cases = 1000, o.max_size = 100, o.deep = true;
  if (const char* env = std::getenv("RC_PARAMS"); env && *env) {
    const auto& rc = rc::detail::configuration().testParams;
    const std::string s = env;
    if (s.find("seed") != std::string::npos) o.seed = rc.seed;
    if (s.find("max_success") != std::string::npos) o.cases = rc.maxSuccess;
    if (s.find("max_size") != std::string::npos) o.max_size = rc.maxSize;
  }
  return o;
}

void announce_seed(std::uint64_t seed) {
  if (const char* env = std::getenv("RC_PARAMS"); !env || !*env) setenv("RC_PARAMS", ("seed=" + std::to_string(seed)).c_str(), 1);
}

int list() {
  std::cout << "implementations:\n";
  for (const auto& i : *known)
    std::cout << "  " << i.name << "  [" << kv::to_string(i.kind) << ", " << i.group << "; " << i.profile.describe() << "]\n      "
              << i.note << "\n";
  std::cout << "properties:\n";
  for (const auto& p : kv::all_properties()) {
    std::string kinds;
    for (auto k : p.kinds) kinds += (kinds.empty() ? "" : ", ") + std::string(kv::to_string(k));
    std::cout << "  " << p.name << "  [" << kinds << "]\n      " << p.summary << "\n";
  }
  return exit_pass;
}

struct gate_flags {
  std::vector<std::string> impls;
  std::string property = "*", profile = "quick", junit, json, store = "kvconform-failures";
  std::optional<std::uint64_t> seed;
  std::optional<int> cases;
};

/// The options `gate` and `port` share: what to run, how much, and where the reports go.
void add_run_flags(CLI::App* cmd, gate_flags& f) {
  cmd->add_option("--property", f.property, "Glob over property names")->capture_default_str();
  cmd->add_option("--profile", f.profile, "quick (every commit) or deep (nightly)")->check(CLI::IsMember({"quick", "deep"}))->capture_default_str();
  cmd->add_option("--seed", f.seed, "Base seed (default 1, or RC_PARAMS seed)");
  cmd->add_option("--cases", f.cases, "Generated cases per property")->check(CLI::PositiveNumber);
  cmd->add_option("--junit", f.junit, "Write JUnit XML here");
  cmd->add_option("--json", f.json, "Write a JSON report here");
  cmd->add_option("--store", f.store, "Regression store directory (\"\" disables)")->capture_default_str();
}

int gate(const gate_flags& f, std::vector<const implementation*> selected = {}) {
  kv::gate_options o;
  o.property_glob = f.property;
  o.store = f.store;
  o.run = options_for(f.profile);
  if (f.seed) o.run.seed = *f.seed;
  if (f.cases) o.run.cases = *f.cases;
  announce_seed(o.run.seed);
  for (const auto& name : f.impls) selected.push_back(&implementation_named(name));
  if (selected.empty())
    for (const auto& i : *known)
      if (i.group == "reference") selected.push_back(&i);
  std::cerr << "kvconform gate: profile " << f.profile << ", seed " << o.run.seed << ", " << o.run.cases << " cases per property\n";
  const auto report = kv::run_gate(selected, o, std::cerr);
  kv::print_report(report, std::cout);
  if (!f.junit.empty()) kv::write_junit(report, f.junit);
  if (!f.json.empty()) kv::write_json(report, f.json);
  return kv::any_failed(report) ? exit_fail : exit_pass;
}

int selftest(const std::string& profile, int seeds, const std::string& json) {
  const run_options o = options_for(profile);
  announce_seed(o.seed);
  std::cerr << "kvconform selftest: profile " << profile << ", " << seeds << " seeds per mutant\n";
  const auto report = kv::run_selftest(*known, o, seeds, std::cerr);
  kv::print_selftest(report, std::cout);
  if (!json.empty()) kv::write_selftest_json(report, json);
  return report.ok() ? exit_pass : exit_fail;
}

/// Replays trace files, each on the implementation it names, on `impl_override`, or on `fixed`.
int replay(const std::vector<std::string>& files, const std::string& impl_override, const implementation* fixed = nullptr) {
  int rc = exit_pass;
  for (const std::string& file : files) {
    const kv::trace t = kv::load_trace(file);
    const std::string name = impl_override.empty() ? t.implementation : impl_override;
    if (name.empty() && !fixed) throw usage_error(file + ": the trace names no implementation; pass --impl NAME");
    const kv::implementation& impl = fixed ? *fixed : implementation_named(name);
    if (impl.kind != t.config.kind)
      throw usage_error(file + ": a " + kv::to_string(t.config.kind) + " trace cannot run on " + impl.name + " (" + kv::to_string(impl.kind) + ")");
    const kv::property* p = t.property.empty() ? nullptr : kv::find_property(t.property);
    const kv::verdict v = kv::check_trace(p, t, impl);
    if (v.ok()) {
      std::cout << "PASS " << file << " on " << impl.name << " (" << t.ops.size() << " ops)\n";
      continue;
    }
    rc = exit_fail;
    std::cout << "FAIL " << file << " on " << impl.name << ": " << v.fail->signature() << ": " << v.fail->message << "\n"
              << "  at op " << v.fail->op_index << " of " << t.ops.size() << ": " << kv::describe(t.ops[v.fail->op_index]) << "\n";
  }
  return rc;
}
}  // namespace

int run_cli(int argc, char** argv, const std::vector<implementation>& impls, const std::string& description) {
  known = &impls;
  CLI::App app{description};
  app.require_subcommand(1);
  auto* list_cmd = app.add_subcommand("list", "List implementations and properties");

  gate_flags gf;
  auto* gate_cmd = app.add_subcommand("gate", "Run the properties on implementations and print the matrix");
  gate_cmd->add_option("--impl", gf.impls, "Implementation to test (repeatable; default: every reference)");
  add_run_flags(gate_cmd, gf);

  std::string st_profile = "quick", st_json;
  int st_seeds = 5;
  auto* selftest_cmd = app.add_subcommand("selftest", "Prove every mutant is killed and every valid variant passes");
  selftest_cmd->add_option("--profile", st_profile, "quick or deep")->check(CLI::IsMember({"quick", "deep"}))->capture_default_str();
  selftest_cmd->add_option("--seeds", st_seeds, "Seeds per mutant (cases to kill is the median over them)")->check(CLI::Range(1, 1000))->capture_default_str();
  selftest_cmd->add_option("--json", st_json, "Write the kill matrix as JSON here");

  std::vector<std::string> files;
  std::string replay_impl;
  auto* replay_cmd = app.add_subcommand("replay", "Replay saved traces; exit 1 if any still fails");
  replay_cmd->add_option("files", files, "Trace files")->required();
  replay_cmd->add_option("--impl", replay_impl, "Run on this implementation instead of the one the trace names");

  gate_flags pf;
  std::string port_kind;
  port_options po;
  std::vector<std::string> port_replay;
  auto* port_cmd = app.add_subcommand("port", "Drive a cache in another language over the line protocol (docs/port-protocol.md): port [options] -- COMMAND [ARGS...]");
  port_cmd->add_option("--kind", port_kind, "Cache kind the port implements")->required()->check(CLI::IsMember({"flat", "ring", "paged", "beam"}));
  add_run_flags(port_cmd, pf);
  port_cmd->add_option("--timeout-ms", po.timeout_ms, "Time limit per request")->check(CLI::Range(1, 3600000))->capture_default_str();
  port_cmd->add_option("--replay", port_replay, "Replay this trace file on the port instead of generating (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  // Everything after the first "--" is the port's command line, kept away from CLI11 (an
  // option with values right before "--" would otherwise take the command's own flags).
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--") {
      po.command.assign(argv + i + 1, argv + argc);
      argc = i;
      break;
    }
  std::string vectors_out, vectors_kind;
  std::uint64_t vectors_seed = 1;
  auto* vectors_cmd = app.add_subcommand("vectors", "Write Wycheproof-style test vectors and their JSON Schema");
  vectors_cmd->add_option("--out", vectors_out, "Directory to write into")->required();
  vectors_cmd->add_option("--kind", vectors_kind, "Only this kind")->check(CLI::IsMember({"flat", "ring", "paged", "beam"}));
  vectors_cmd->add_option("--seed", vectors_seed, "Seed of the generated data")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return exit_usage;
  }
  try {
    if (*list_cmd) return list();
    if (*gate_cmd) return gate(gf);
    if (*replay_cmd) return replay(files, replay_impl);
    if (*selftest_cmd) return selftest(st_profile, st_seeds, st_json);
    if (*vectors_cmd) {
      std::vector<cache_kind> kinds;
      for (cache_kind k : {cache_kind::flat, cache_kind::ring, cache_kind::paged, cache_kind::beam})
        if (vectors_kind.empty() || vectors_kind == to_string(k)) kinds.push_back(k);
      announce_seed(vectors_seed);
      for (const std::string& f : write_vectors(vectors_out, kinds, *known, vectors_seed)) std::cout << "wrote " << f << "\n";
      return exit_pass;
    }
    if (*port_cmd) {
      if (po.command.empty()) throw usage_error("port: give the port's command after --");
      const implementation port = make_port_implementation(*kind_from_string(port_kind), po);
      return port_replay.empty() ? gate(pf, {&port}) : replay(port_replay, "", &port);
    }
  } catch (const usage_error& e) {
    std::cerr << "kvconform: " << e.what() << "\n";
    return exit_usage;
  } catch (const kv::trace_format_error& e) {
    std::cerr << "kvconform: malformed trace: " << e.what() << "\n";
    return exit_usage;
  } catch (const std::exception& e) {
    std::cerr << "kvconform: " << e.what() << "\n";
    return exit_usage;
  }
  return exit_usage;
}

}  // namespace kvconform
