// The kvconform command line over a list of implementations: list, gate, replay, selftest, vectors, port.
#include "properties/runners/cli.h"

#include <rapidcheck/detail/Configuration.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "properties/port/port.h"
#include "properties/runners/gate.h"
#include "properties/runners/parallel.h"
#include "properties/runners/selftest.h"
#include "properties/trace/kind_spec.h"
#include "properties/trace/schema.h"
#include "properties/trace/trace_json.h"
#include "properties/vectors/vectors.h"

namespace kvconform {

namespace {
constexpr int exit_pass = 0, exit_fail = 1, exit_usage = 2;

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
  if (const char* env = std::getenv("RC_PARAMS"); !env || !*env)
    setenv("RC_PARAMS", ("seed=" + std::to_string(seed)).c_str(), 1);
}

/// The options `gate` and `port` share: what to run, how much, and where the reports go.
struct run_flags {
  std::vector<std::string> impls;
  std::string property = "*", profile = "quick", junit, json, store = "kvconform-failures", kind;
  std::optional<std::uint64_t> seed;
  std::optional<int> cases;
  int jobs = available_cpus();
  std::string shard;

  void add_to(CLI::App* cmd) {
    cmd->add_option("-j,--jobs", jobs, "Properties run at once, each in its own process (default: the CPUs)")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
    cmd->add_option("--shard", shard,
                    "Run only shard I of N (I/N, 0-based; default GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS if set)");
    cmd->add_option("--property", property, "Glob over property names")->capture_default_str();
    cmd->add_option("--profile", profile, "quick (every commit) or deep (nightly)")
        ->check(CLI::IsMember({"quick", "deep"}))
        ->capture_default_str();
    cmd->add_option("--seed", seed, "Base seed (default 1, or RC_PARAMS seed)");
    cmd->add_option("--cases", cases, "Generated cases per property")->check(CLI::PositiveNumber);
    cmd->add_option("--junit", junit, "Write JUnit XML here");
    cmd->add_option("--json", json, "Write a JSON report here");
    cmd->add_option("--store", store, "Regression store directory (\"\" disables)")->capture_default_str();
  }
};

/// One runner's command line: the implementations it knows and the subcommands over them.
class command_line {
 public:
  command_line(const std::vector<implementation>& impls, std::string runner)
      : impls_(impls), runner_(std::move(runner)) {}

  int list() const {
    std::cout << "implementations:\n";
    for (const auto& i : impls_)
      std::cout << "  " << i.name << "  [" << to_string(i.kind) << ", " << to_string(i.group) << "; "
                << i.profile.describe() << "]\n      " << i.note
                << (i.killer.empty() ? "" : " (killed by " + i.killer + ")") << "\n";
    for (const kind_spec* k : kind_specs()) {
      std::cout << k->name << " properties:\n";
      for (const property* p : properties_of(k->kind)) std::cout << "  " << p->name << "\n      " << p->summary << "\n";
    }
    return exit_pass;
  }

  /// Runs the gate over `selected` (default: --impl names, else every reference). `hint` says how
  /// to replay a saved failure.
  int gate(const run_flags& f, std::vector<const implementation*> selected,
           std::function<std::string(const std::string&)> hint) const {
    gate_options o;
    o.property_glob = f.property;
    o.store = f.store;
    o.run = options_for(f.profile);
    o.replay_hint = std::move(hint);
    if (f.seed) o.run.seed = *f.seed;
    if (f.cases) o.run.cases = *f.cases;
    o.jobs = f.jobs;
    if (!f.shard.empty()) {
      const auto shard = parse_shard(f.shard);
      if (!shard) throw usage_error("--shard " + f.shard + ": expected I/N with 0 <= I < N");
      o.shard = *shard;
    } else if (const auto shard = shard_from_environment()) {
      o.shard = *shard;
    }
    announce_seed(o.run.seed);
    (void)rc::detail::configuration();  // read (and announced) once here, not once per -j worker
    for (const auto& name : f.impls) selected.push_back(&named(name));
    if (selected.empty())
      for (const auto& i : impls_)
        if (i.group == impl_group::reference) selected.push_back(&i);
    if (!f.kind.empty()) {  // one kind's share, so that ctest and CI can split the gate by kind
      std::erase_if(selected, [&](const implementation* i) { return f.kind != to_string(i->kind); });
      if (selected.empty()) throw usage_error("--kind " + f.kind + ": no selected implementation is of that kind");
    }
    std::cerr << "kvconform gate: profile " << f.profile << ", seed " << o.run.seed << ", " << o.run.cases
              << " cases per property\n";
    const auto report = run_gate(selected, o, std::cerr);
    print_report(report, std::cout);
    if (!f.junit.empty()) write_junit(report, f.junit);
    if (!f.json.empty()) write_json(report, f.json);
    return any_failed(report) ? exit_fail : exit_pass;
  }

  int selftest(const std::string& profile, int seeds, const std::string& json) const {
    const run_options o = options_for(profile);
    announce_seed(o.seed);
    std::cerr << "kvconform selftest: profile " << profile << ", " << seeds << " seeds per mutant\n";
    const auto report = run_selftest(impls_, o, seeds, std::cerr);
    print_selftest(report, std::cout);
    if (!json.empty()) write_selftest_json(report, json);
    return report.ok() ? exit_pass : exit_fail;
  }

  /// Replays trace files, each on the implementation it names, on `impl_override`, or on `fixed`.
  int replay(const std::vector<std::string>& files, const std::string& impl_override,
             const implementation* fixed = nullptr) const {
    int rc = exit_pass;
    for (const std::string& file : files) {
      const trace t = load_trace(file);
      const std::string name = impl_override.empty() ? t.implementation : impl_override;
      if (name.empty() && !fixed) throw usage_error(file + ": the trace names no implementation; pass --impl NAME");
      const implementation& impl = fixed ? *fixed : named(name);
      if (impl.kind != t.config.kind)
        throw usage_error(file + ": a " + to_string(t.config.kind) + " trace cannot run on " + impl.name + " (" +
                          to_string(impl.kind) + ")");
      const property* p = t.property.empty() ? nullptr : find_property(t.property, impl.kind);
      const verdict v = check_trace(p, t, impl);
      if (v.ok()) {
        std::cout << "PASS " << file << " on " << impl.name << " (" << t.ops.size() << " ops)\n";
        continue;
      }
      rc = exit_fail;
      std::cout << "FAIL " << file << " on " << impl.name << ": " << v.fail->signature() << ": " << v.fail->message
                << "\n"
                << "  at op " << v.fail->op_index << " of " << t.ops.size() << ": " << describe(t.ops[v.fail->op_index])
                << "\n";
    }
    return rc;
  }

  int vectors(const std::string& out, const std::string& kind, std::uint64_t seed) const {
    std::vector<cache_kind> kinds;
    for (const kind_spec* k : kind_specs())
      if (kind.empty() || kind == k->name) kinds.push_back(k->kind);
    announce_seed(seed);
    for (const std::string& f : write_vectors(out, kinds, impls_, seed)) std::cout << "wrote " << f << "\n";
    return exit_pass;
  }

  const implementation& named(const std::string& name) const {
    for (const auto& i : impls_)
      if (i.name == name) return i;
    std::string names;
    for (const auto& i : impls_) names += (names.empty() ? "" : ", ") + i.name;
    throw usage_error("unknown implementation \"" + name + "\" (known: " + names + ")");
  }
  const std::string& runner() const { return runner_; }

 private:
  const std::vector<implementation>& impls_;
  std::string runner_;
};

/// The shell-quoted words of a command line, for a replay hint.
std::string shell_words(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) {
    const bool plain =
        !w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@") ==
                          std::string::npos;
    s += (s.empty() ? "" : " ") + (plain ? w : "'" + w + "'");  // names with quotes in them are not expected
  }
  return s;
}

std::vector<std::string> kind_name_list() {
  std::vector<std::string> names;
  for (const kind_spec* k : kind_specs()) names.emplace_back(k->name);
  return names;
}

/// Every subcommand's options, registered on one CLI11 app; `run` dispatches to the one given.
struct subcommands {
  CLI::App *list = nullptr, *gate = nullptr, *selftest = nullptr, *replay = nullptr, *port = nullptr,
           *vectors = nullptr, *schema = nullptr;
  run_flags gate_flags, port_flags;
  std::string selftest_profile = "quick", selftest_json, replay_impl, port_kind, vectors_out, vectors_kind, schema_name;
  int selftest_seeds = 5;
  std::vector<std::string> replay_files, port_replay;
  port_options port_opts;
  std::uint64_t vectors_seed = 1;

  explicit subcommands(CLI::App& app) {
    list = app.add_subcommand("list", "List implementations and properties");
    gate = app.add_subcommand("gate", "Run the properties on implementations and print the matrix");
    gate->add_option("--impl", gate_flags.impls, "Implementation to test (repeatable; default: every reference)");
    gate->add_option("--kind", gate_flags.kind, "Only implementations of this kind")
        ->check(CLI::IsMember(kind_name_list()));
    gate_flags.add_to(gate);
    add_selftest(app);
    replay = app.add_subcommand("replay", "Replay saved traces; exit 1 if any still fails");
    replay->add_option("files", replay_files, "Trace files")->required();
    replay->add_option("--impl", replay_impl, "Run on this implementation instead of the one the trace names");
    add_port(app);
    vectors = app.add_subcommand("vectors", "Write Wycheproof-style test vectors and their JSON Schema");
    vectors->add_option("--out", vectors_out, "Directory to write into")->required();
    vectors->add_option("--kind", vectors_kind, "Only this kind")->check(CLI::IsMember(kind_name_list()));
    vectors->add_option("--seed", vectors_seed, "Seed of the generated data")->capture_default_str();
    schema = app.add_subcommand("schema", "Print the JSON Schema of trace files, the port protocol or the vectors");
    schema->add_option("which", schema_name, "trace, port or vectors")
        ->required()
        ->check(CLI::IsMember({"trace", "port", "vectors"}));
  }

  void add_selftest(CLI::App& app) {
    selftest = app.add_subcommand("selftest", "Prove every mutant is killed and every valid variant passes");
    selftest->add_option("--profile", selftest_profile, "quick or deep")
        ->check(CLI::IsMember({"quick", "deep"}))
        ->capture_default_str();
    selftest->add_option("--seeds", selftest_seeds, "Seeds per mutant (cases to kill is the median over them)")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    selftest->add_option("--json", selftest_json, "Write the kill matrix as JSON here");
  }

  void add_port(CLI::App& app) {
    port = app.add_subcommand("port",
                              "Drive a cache in another language over the line protocol (docs/port-protocol.md): port "
                              "[options] -- COMMAND [ARGS...]");
    port->add_option("--kind", port_kind, "Cache kind the port implements")
        ->required()
        ->check(CLI::IsMember(kind_name_list()));
    port_flags.add_to(port);
    port->add_option("--timeout-ms", port_opts.timeout_ms, "Time limit per request")
        ->check(CLI::Range(1, 3600000))
        ->capture_default_str();
    port->add_option("--replay", port_replay, "Replay this trace file on the port instead of generating (repeatable)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  }

  int run(const command_line& cmd) const {
    if (*list) return cmd.list();
    if (*gate)
      return cmd.gate(gate_flags, {}, [&](const std::string& path) {
        return shell_words({cmd.runner(), "replay", path});
      });
    if (*replay) return cmd.replay(replay_files, replay_impl);
    if (*selftest) return cmd.selftest(selftest_profile, selftest_seeds, selftest_json);
    if (*vectors) return cmd.vectors(vectors_out, vectors_kind, vectors_seed);
    if (*schema) {
      const auto s = schema_name == "trace"  ? schema::trace_file()
                     : schema_name == "port" ? port_protocol_schema()
                                             : vectors_schema();
      std::cout << s.dump(2) << "\n";
      return exit_pass;
    }
    if (*port) return run_port(cmd);
    return exit_usage;
  }

  int run_port(const command_line& cmd) const {
    if (port_opts.command.empty()) throw usage_error("port: give the port's command after --");
    const implementation impl = make_port_implementation(*kind_from_string(port_kind), port_opts);
    if (!port_replay.empty()) return cmd.replay(port_replay, "", &impl);
    return cmd.gate(port_flags, {&impl}, [&](const std::string& path) {
      std::vector<std::string> words = {cmd.runner(), "port", "--kind", port_kind, "--replay", path, "--"};
      words.insert(words.end(), port_opts.command.begin(), port_opts.command.end());
      return shell_words(words);
    });
  }
};
}  // namespace

int run_cli(int argc, char** argv, const std::vector<implementation>& impls, const std::string& description) {
  if (const auto problems = registry_problems(impls); !problems.empty()) {
    for (const std::string& p : problems) std::cerr << "kvconform: " << p << "\n";
    return exit_usage;
  }
  const command_line cmd(impls, argc > 0 ? argv[0] : "kvconform");
  CLI::App app{description};
  app.require_subcommand(1);
  subcommands sub(app);
  // Everything after the first "--" is the port's command line, kept away from CLI11 (an
  // option with values right before "--" would otherwise take the command's own flags).
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--") {
      sub.port_opts.command.assign(argv + i + 1, argv + argc);
      argc = i;
      break;
    }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? exit_pass : exit_usage;  // help is a success, anything else a usage error
  }
  try {
    return sub.run(cmd);
  } catch (const usage_error& e) {
    std::cerr << "kvconform: " << e.what() << "\n";
  } catch (const trace_format_error& e) {
    std::cerr << "kvconform: malformed trace: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "kvconform: " << e.what() << "\n";
  }
  return exit_usage;
}

}  // namespace kvconform
