// `kvconform gate`: the matrix over the selected implementations, its reports and its exit code.
#include <fnmatch.h>
#include <unistd.h>

#include <rapidcheck/detail/Configuration.h>

#include <iostream>
#include <memory>
#include <set>

#include "properties/cli/run_params.h"
#include "properties/cli/subcommand.h"
#include "properties/executor/stop.h"
#include "properties/runners/baseline.h"
#include "properties/runners/gate.h"
#include "properties/runners/parallel.h"
#include "properties/trace/file_io.h"
#include "properties/trace/utf8.h"

namespace kvconform::cli {

namespace {
/// The gate's options: the profile's (with RC_PARAMS), then the flags, which win.
gate_options options_of(const run_flags& f, replay_words hint, rerun_words rerun) {
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
  if (::isatty(STDOUT_FILENO) == 1) o.progress_fd = STDOUT_FILENO;  // a live line on a terminal, nothing elsewhere
  if (!f.shard.empty()) {
    const auto shard = parse_shard(f.shard);
    if (!shard) throw usage_error("--shard " + f.shard + ": expected I/N with 0 <= I < N");
    o.shard = *shard;
  } else if (const auto shard = shard_from_environment()) {
    o.shard = *shard;
  }
  return o;
}

/// `selected`, else the --impl names, else every reference; then only those of --kind.
std::vector<const implementation*> selection(const command_line& cmd, const run_flags& f,
                                             std::vector<const implementation*> selected) {
  for (const auto& name : f.impls) selected.push_back(&cmd.named(name));
  if (selected.empty())
    for (const auto& i : cmd.impls())
      if (i.group == impl_group::reference) selected.push_back(&i);
  if (!f.kind.empty()) {  // one kind's share, so that ctest and CI can split the gate by kind
    std::erase_if(selected, [&](const implementation* i) { return f.kind != to_string(i->kind); });
    if (selected.empty()) throw usage_error("--kind " + f.kind + ": no selected implementation is of that kind");
  }
  return selected;
}

/// A glob that selects nothing would pass having run nothing: an error instead.
void check_glob(const std::string& glob, const std::vector<const implementation*>& selected) {
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

/// The baseline's entries, checked before any test against the runner's implementations and `selected` (a
/// port); a malformed file is exit 2 naming its line.
std::vector<baseline_entry> baseline_of(const command_line& cmd, const run_flags& f,
                                        const std::vector<const implementation*>& selected) {
  if (f.baseline.empty()) return {};
  std::vector<const implementation*> known = selected;
  for (const implementation& i : cmd.impls()) known.push_back(&i);
  try {
    return read_baseline(f.baseline, known);
  } catch (const std::exception& e) {  // baseline_error or file_error
    throw usage_error("baseline " + std::string(e.what()));
  }
}

/// The baseline of the run (--write-baseline), written whole or not at all; false if it could not be.
bool write_baseline_file(const std::vector<impl_report>& report, const std::vector<baseline_entry>& previous,
                         const std::string& path) {
  try {
    write_whole(path, baseline_text(report, previous));
    return true;
  } catch (const std::exception& e) {  // file_error or baseline_error
    std::cerr << "kvconform: --write-baseline: " << valid_utf8(e.what()) << "\n";
    return false;
  }
}

/// The JUnit, JSON and HTML reports and the baseline, each tried even if another fails; a report or a
/// failure that could not be written completely is exit 2, after the failures found are known. Then 1
/// for a FAIL the baseline does not list, 3 when the only news is a listed cell that passed.
int write_reports(const std::vector<impl_report>& report, const run_flags& f,
                  const std::vector<baseline_entry>& baseline) {
  bool written = write_report_files(report, f.junit, f.json, f.html, std::cerr);
  if (!f.write_baseline.empty()) written = write_baseline_file(report, baseline, f.write_baseline) && written;
  if (!written) return exit_usage;
  if (any_failed(report) || coverage_gaps(report) > 0) return exit_fail;
  if (const std::size_t fixed = fixed_cells(report)) {
    std::cerr << "kvconform: " << fixed << " cell" << (fixed > 1 ? "s" : "") << " of the baseline passed (FIXED "
              << "above): take " << (fixed > 1 ? "their lines" : "its line") << " out of " << valid_utf8(f.baseline)
              << " (exit 3)\n";
    return exit_fixed;
  }
  return exit_pass;
}
}  // namespace

int run_gate_command(const command_line& cmd, const run_flags& f, std::vector<const implementation*> selected,
                     replay_words hint, rerun_words rerun) {
  const gate_options o = options_of(f, std::move(hint), std::move(rerun));
  announce_seed(o.run.seed);
  // Read (and announced) once here, not once per -j worker; no public RapidCheck call loads it without running a test.
  (void)rc::detail::configuration();
  selected = selection(cmd, f, std::move(selected));
  check_glob(f.property, selected);
  const std::vector<baseline_entry> baseline = baseline_of(cmd, f, selected);
  std::cerr << "kvconform gate: profile " << f.profile << ", seed " << o.run.seed << ", " << o.run.cases
            << " cases per property\n";
  set_run_deadline(deadline_clock::now() + std::chrono::seconds(f.run_deadline_s));
  auto report = run_gate(selected, o, std::cerr);
  apply_baseline(report, baseline);
  print_report(report, std::cout);
  if (f.stats) print_coverage(report, std::cout);
  return write_reports(report, f, baseline);
}

subcommand add_gate(CLI::App& app, const command_line& cmd) {
  auto f = std::make_shared<run_flags>();
  CLI::App* sub = app.add_subcommand("gate", "Run the properties on implementations and print the matrix");
  sub->add_option("--impl", f->impls, "Implementation to test (repeatable; default: every reference)");
  sub->add_option("--kind", f->kind, "Only implementations of this kind")->check(CLI::IsMember(kind_name_list()));
  f->jobs = available_cpus();
  sub->add_option("-j,--jobs", f->jobs, "Properties run at once, each in its own process (default: the CPUs)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  f->add_to(sub);
  return {
      sub, [f, &cmd] {
        return run_gate_command(
            cmd, *f, {},
            [&cmd](const std::string& path) {
              return shell_words({cmd.runner(), "replay", path});
            },
            [&cmd](const implementation& i, std::uint64_t seed) {
              return shell_words({cmd.runner(), "gate", "--impl", i.name, "--seed", std::to_string(seed), "--stats"});
            });
      }};
}

}  // namespace kvconform::cli
