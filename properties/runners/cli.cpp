// The kvconform command line over a list of implementations: list, gate, replay, selftest, vectors, port.
#include "properties/runners/cli.h"

#include <fnmatch.h>

#include <rapidcheck/detail/Configuration.h>

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <set>

#include "properties/executor/stop.h"
#include "properties/port/library.h"
#include "properties/port/port.h"
#include "properties/runners/cli_flags.h"
#include "properties/runners/gate.h"
#include "properties/runners/parallel.h"
#include "properties/runners/run_params.h"
#include "properties/runners/selftest.h"
#include "properties/runners/store.h"
#include "properties/trace/file_io.h"
#include "properties/trace/kind_spec.h"
#include "properties/trace/schema.h"
#include "properties/trace/trace_json.h"
#include "properties/trace/utf8.h"
#include "properties/vectors/vectors.h"

namespace kvconform {

namespace {
constexpr int exit_pass = 0, exit_fail = 1, exit_usage = 2;

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
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

  /// What runs an implementation's row again with the statistics, for a seed (a coverage gap's hint).
  using rerun_words = std::function<std::string(const implementation&, std::uint64_t seed)>;

  /// Runs the gate over `selected` (default: --impl names, else every reference). `hint` says how
  /// to replay a saved failure, `rerun` how to see a row's coverage statistics again.
  int gate(const run_flags& f, std::vector<const implementation*> selected,
           std::function<std::string(const std::string&)> hint, rerun_words rerun) const {
    gate_options o;
    o.property_glob = f.property;
    o.store = f.store;
    o.run = profile_options(f.profile);
    o.replay_hint = std::move(hint);
    o.deadline_s = f.deadline_s;
    if (f.seed) o.run.seed = *f.seed;
    if (f.cases) o.run.cases = *f.cases;
    // The guard holds quick runs of the full size only: fewer or smaller cases may miss rare events.
    o.coverage_guard = !o.run.deep && o.run.cases >= run_options{}.cases && o.run.max_size >= run_options{}.max_size;
    o.rerun_hint = [rerun = std::move(rerun), seed = o.run.seed](const implementation& i) { return rerun(i, seed); };
    if (f.search) o.run.search = *f.search;
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
    check_glob(f.property, selected);
    std::cerr << "kvconform gate: profile " << f.profile << ", seed " << o.run.seed << ", " << o.run.cases
              << " cases per property\n";
    set_run_deadline(deadline_clock::now() + std::chrono::seconds(f.run_deadline_s));
    const auto report = run_gate(selected, o, std::cerr);
    print_report(report, std::cout);
    if (f.stats) print_coverage(report, std::cout);
    return write_reports(report, f);
  }

  /// A glob that selects nothing would pass having run nothing: an error instead.
  static void check_glob(const std::string& glob, const std::vector<const implementation*>& selected) {
    std::set<std::string> known;
    for (const implementation* impl : selected)
      for (const property* p : properties_of(impl->kind)) {
        if (fnmatch(glob.c_str(), p->name.c_str(), 0) == 0) return;
        known.insert(p->name);
      }
    std::string names;
    for (const std::string& n : known) names += (names.empty() ? "" : ", ") + n;
    throw usage_error("--property '" + glob + "' matches no property of the selected implementations (known: " + names +
                      ")");
  }

  /// The JUnit, JSON and HTML reports, each tried even if another fails; a report or a failure that
  /// could not be written completely is exit 2, after the failures found are known.
  static int write_reports(const std::vector<impl_report>& report, const run_flags& f) {
    if (!write_report_files(report, f.junit, f.json, f.html, std::cerr)) return exit_usage;
    return any_failed(report) || coverage_gaps(report) > 0 ? exit_fail : exit_pass;
  }

  int selftest(const std::string& profile, int seeds, const std::string& json, std::optional<int> search) const {
    run_options o = profile_options(profile);
    if (search) o.search = *search;
    announce_seed(o.seed);
    std::cerr << "kvconform selftest: profile " << profile << ", " << seeds << " seeds per mutant\n";
    const auto report = run_selftest(impls_, o, seeds, std::cerr);
    print_selftest(report, std::cout);
    if (!json.empty()) write_selftest_json(report, json);
    return report.ok() ? exit_pass : exit_fail;
  }

  /// Replays trace files, each on the implementation it names, on `impl_override`, or on `fixed`,
  /// each within `deadline_s` (0: none).
  int replay(const std::vector<std::string>& files, const std::string& impl_override,
             const implementation* fixed = nullptr, int deadline_s = 0) const {
    int rc = exit_pass;
    for (const std::string& file : files) {
      const trace t = load_trace(file);
      const std::string name = impl_override.empty() ? t.implementation : impl_override;
      if (name.empty() && !fixed) throw usage_error(file + ": the trace names no implementation; pass --impl NAME");
      const implementation& impl = fixed ? *fixed : named(name);
      const property* p = replay_property(t, impl, file);
      if (deadline_s > 0) set_property_deadline(deadline_clock::now() + std::chrono::seconds(deadline_s));
      const verdict v = check_trace(p, t, impl);
      set_property_deadline(std::nullopt);
      if (v.ok()) {
        std::cout << "PASS " << file << " on " << impl.name << " (" << t.ops.size() << " ops)\n";
        continue;
      }
      rc = exit_fail;
      const std::size_t at = v.fail->op_index;
      std::cout << "FAIL " << valid_utf8(file) << " on " << impl.name << ": " << v.fail->signature() << ": "
                << valid_utf8(v.fail->message) << "\n  at op " << at << " of " << t.ops.size() << ": "
                << (at < t.ops.size() ? describe(t.ops[at])
                    : t.drive_seed    ? v.fail->op_name + ", which the driver ran past the saved ops"
                                      : v.fail->op_name)
                << "\n";
      if (stopped_early(*v.fail)) break;
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
  std::string selftest_profile = "quick", selftest_json, replay_impl, port_kind, port_library, vectors_out,
              vectors_kind, schema_name;
  int selftest_seeds = 5;
  std::optional<int> selftest_search;
  std::vector<std::string> replay_files, port_replay;
  port_options port_opts;
  std::uint64_t vectors_seed = 1;

  explicit subcommands(CLI::App& app) {
    list = app.add_subcommand("list", "List implementations and properties");
    gate = app.add_subcommand("gate", "Run the properties on implementations and print the matrix");
    gate->add_option("--impl", gate_flags.impls, "Implementation to test (repeatable; default: every reference)");
    gate->add_option("--kind", gate_flags.kind, "Only implementations of this kind")
        ->check(CLI::IsMember(kind_name_list()));
    gate_flags.jobs = available_cpus();
    gate->add_option("-j,--jobs", gate_flags.jobs,
                     "Properties run at once, each in its own process (default: the CPUs)")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
    gate_flags.add_to(gate);
    add_selftest(app);
    replay = app.add_subcommand("replay", "Replay saved traces; exit 1 if any still fails");
    replay->add_option("files", replay_files, "Trace files")->required();
    replay->add_option("--impl", replay_impl, "Run on this implementation instead of the one the trace names");
    add_port(app);
    vectors = app.add_subcommand("vectors", "Write Wycheproof-style test vectors and their JSON Schema");
    vectors->add_option("--out", vectors_out, "Directory to write into")->required();
    vectors->add_option("--kind", vectors_kind, "Only this kind")->check(CLI::IsMember(kind_name_list()));
    vectors->add_option("--seed", vectors_seed, "Seed of the generated data")
        ->check(count_in(0, any_seed))
        ->capture_default_str();
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
    selftest
        ->add_option("--search", selftest_search,
                     "Traces of the targeted numeric search per decode property (0: random cases only)")
        ->check(count_in(0, max_cases));
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
    port->add_option("--library", port_library,
                     "Load a cache behind the C ABI of <kvconform/c_port.h> instead of a command");
    port->add_option("--replay", port_replay, "Replay this trace file on the port instead of generating (repeatable)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  }

  int run(const command_line& cmd) const {
    if (*list) return cmd.list();
    if (*gate)
      return cmd.gate(
          gate_flags, {},
          [&](const std::string& path) {
            return shell_words({cmd.runner(), "replay", path});
          },
          [&](const implementation& i, std::uint64_t seed) {
            return shell_words({cmd.runner(), "gate", "--impl", i.name, "--seed", std::to_string(seed), "--stats"});
          });
    if (*replay) return cmd.replay(replay_files, replay_impl);
    if (*selftest) return cmd.selftest(selftest_profile, selftest_seeds, selftest_json, selftest_search);
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
    const cache_kind kind = *kind_from_string(port_kind);
    if (port_library.empty() == port_opts.command.empty())
      throw usage_error("port: give either --library PATH or the port's command after --");
    implementation impl;
    try {
      impl = port_library.empty() ? make_port_implementation(kind, port_opts)
                                  : make_library_implementation(kind, port_library);
    } catch (const std::invalid_argument& e) {
      throw usage_error("port: " + std::string(e.what()));
    }
    if (!port_replay.empty()) {
      set_run_deadline(deadline_clock::now() + std::chrono::seconds(port_flags.run_deadline_s));
      return cmd.replay(port_replay, "", &impl, port_flags.deadline_s);
    }
    // The port's own command line with `flags` before its command.
    const auto port_words = [&](std::vector<std::string> flags) {
      std::vector<std::string> words = {cmd.runner(), "port", "--kind", port_kind};
      words.insert(words.end(), flags.begin(), flags.end());
      if (!port_library.empty())
        words.insert(words.end(), {"--library", port_library});
      else
        words.push_back("--"), words.insert(words.end(), port_opts.command.begin(), port_opts.command.end());
      return shell_words(words);
    };
    return cmd.gate(
        port_flags, {&impl},
        [&](const std::string& path) {
          return port_words({"--replay", path});
        },
        [&](const implementation&, std::uint64_t seed) {
          return port_words({"--seed", std::to_string(seed), "--stats"});
        });
  }
};
/// Runs the chosen subcommand; every error is a message and exit 2, never an abort.
int run_guarded(const subcommands& sub, const command_line& cmd) {
  try {
    return sub.run(cmd);
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
}  // namespace

int run_cli(int argc, char** argv, const std::vector<implementation>& impls, const std::string& description) {
  if (const auto problems = registry_problems(impls); !problems.empty()) {
    for (const std::string& p : problems) std::cerr << "kvconform: " << p << "\n";
    return exit_usage;
  }
  // A port that exits makes writes fail with EPIPE, a file size limit makes them fail with EFBIG:
  // errors to report, not signals that end the run. SIGINT and SIGTERM stop it at an op boundary.
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);
  install_stop_handlers();
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
  return final_code(run_guarded(sub, cmd));
}

}  // namespace kvconform
