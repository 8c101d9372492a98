// Gate orchestration: selection, the regression store, saving failures, and stopping early.
#include "properties/runners/gate.h"

#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "properties/executor/stop.h"
#include "properties/runners/parallel.h"
#include "properties/runners/store.h"
#include "properties/trace/file_io.h"
#include "properties/trace/trace_json.h"

namespace kvconform {

namespace {
/// The first stored trace for (impl, property) that still fails, if any. The store was checked
/// before the run; an entry another process left unreadable since is skipped with a warning.
std::optional<std::pair<stored_trace, verdict>> replay_store(const regression_store& store, const implementation& impl,
                                                             const property& p, std::ostream& log) {
  std::vector<stored_trace> stored;
  try {
    stored = store.entries(impl, p);
  } catch (const std::exception& e) {
    log << "  warning: skipped the stored traces of " << impl.name << " / " << p.name << ": " << e.what() << "\n";
  }
  for (stored_trace& s : stored) {
    const verdict v = check_trace(&p, s.t, impl);
    if (v.fail && stopped_early(*v.fail)) return std::nullopt;  // not run to its end: no verdict
    log << "  replayed stored " << s.path << ": " << (v.ok() ? "passes now" : "still fails") << "\n";
    if (!v.ok()) return std::pair{std::move(s), v};
  }
  return std::nullopt;
}

/// Generates cases; a new minimal failing trace is saved at once.
void generate(property_report& pr, const implementation& impl, const property& p, const gate_options& o,
              const regression_store& store, std::ostream& log) {
  run_options ro = o.run;  // a format reference runs its share of the cases (docs/numerics.md §6.5)
  ro.cases = std::max(1, static_cast<int>(ro.cases * impl.case_share));
  property_run run = run_property(p, impl, ro);
  if (run.fail && stopped_early(*run.fail)) run.fail.reset(), run.counterexample.reset();  // a fixed trace cut short
  pr.cases = run.cases, pr.stats = run.stats, pr.fail = run.fail;
  pr.source = p.fixed ? "fixed" : "generated";
  if (!run.error.empty()) pr.result = status::fail, pr.message = run.error;
  if (!run.fail) return;
  if (run.fail->check == "not-supported") {  // an op the implementation lacks: no finding, nothing to save
    pr.result = status::not_supported, pr.fail.reset(), pr.message = run.fail->message;
    return;
  }
  pr.result = status::fail;
  run.counterexample->implementation = impl.name;
  run.counterexample->property = p.name;
  run.counterexample->note = run.fail->signature() + ": " + run.fail->message;
  pr.counterexample = std::move(run.counterexample);
  if (!store.enabled()) return;
  try {
    pr.saved_path = store.save(*pr.counterexample);
    pr.replay = o.replay_hint(pr.saved_path);
  } catch (const file_error& e) {
    pr.save_error = e.what();
    log << "  error: the failure of " << impl.name << " / " << p.name << " was not saved: " << e.what() << "\n";
  }
}

/// A cell the run stopped in before a finding: INTERRUPTED for a signal, a FAIL for a deadline.
void mark_stopped(property_report& pr, stop_reason why) {
  if (why == stop_reason::signal) {
    pr.result = status::interrupted, pr.message = describe(why);
    return;
  }
  pr.result = status::fail;
  pr.message = "deadline: " + describe(why) + " after " + std::to_string(pr.cases) + " cases";
}

/// One cell of the matrix, within the property's deadline.
property_report run_cell(const implementation& impl, const property& p, const gate_options& o,
                         const regression_store& store, std::ostream& log) {
  property_report pr;
  pr.property = p.name;
  const auto start = std::chrono::steady_clock::now();
  take_stop_seen();
  if (o.deadline_s > 0)
    set_property_deadline(
        start + std::chrono::duration_cast<deadline_clock::duration>(std::chrono::duration<double>(o.deadline_s)));
  if (!impl.unavailable.empty()) {
    pr.result = status::not_supported;
    pr.message = impl.unavailable;
  } else if (const auto missing = p.needs.missing_from(impl.capabilities)) {
    pr.result = status::not_supported;
    pr.message = std::string("needs capability \"") + to_string(*missing) + "\"";
  } else if (auto stored = replay_store(store, impl, p, log)) {
    pr.result = status::fail, pr.cases = 0, pr.source = stored->first.path;
    pr.fail = stored->second.fail, pr.stats = stored->second.stats;
    pr.counterexample = std::move(stored->first.t), pr.saved_path = stored->first.path;
    pr.replay = o.replay_hint(pr.saved_path);
  } else {
    generate(pr, impl, p, o, store, log);
  }
  const stop_reason why = stop_requested();
  set_property_deadline(std::nullopt);
  if (pr.fail) pr.message = pr.fail->signature() + ": " + pr.fail->message;
  if (take_stop_seen() && why != stop_reason::none) {
    if (!pr.fail) mark_stopped(pr, why);  // a failure found before the stop stands, and is saved
    if (why != stop_reason::property_deadline) pr.stopped = describe(why);
  }
  pr.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return pr;
}
}  // namespace

const char* to_string(status s) {
  switch (s) {
    case status::pass: return "PASS";
    case status::fail: return "FAIL";
    case status::not_supported: return "NOT SUPPORTED";
    case status::interrupted: return "INTERRUPTED";
  }
  return "?";
}

std::vector<std::string> registry_problems(const std::vector<implementation>& impls) {
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < impls.size(); ++i) {
    const implementation& impl = impls[i];
    for (std::size_t j = 0; j < i; ++j)
      if (impls[j].name == impl.name) problems.push_back("two implementations are named \"" + impl.name + "\"");
    if (const std::string why = check(impl.profile); !why.empty())
      problems.push_back(impl.name + " declares an invalid storage format: " + why);
    if (impl.group != impl_group::mutant) continue;
    if (impl.killer.empty())
      problems.push_back("mutant " + impl.name + " names no property expected to kill it");
    else if (!find_property(impl.killer, impl.kind))
      problems.push_back("mutant " + impl.name + ": its killer \"" + impl.killer + "\" is not a property of the " +
                         to_string(impl.kind) + " kind");
  }
  return problems;
}

bool any_failed(const std::vector<impl_report>& r) {
  for (const auto& i : r)
    for (const auto& p : i.properties)
      if (p.result == status::fail) return true;
  return false;
}

std::string partial_reason(const std::vector<impl_report>& r) {
  for (const auto& i : r)
    for (const auto& p : i.properties)
      if (!p.stopped.empty()) return p.stopped;
  return "";
}

std::vector<impl_report> run_gate(const std::vector<const implementation*>& impls, const gate_options& o,
                                  std::ostream& log) {
  const regression_store store(o.store);
  store.check(impls, o.property_glob);
  std::vector<gate_cell> cells;
  std::size_t k = 0;  // cells in matrix order, before sharding
  for (std::size_t i = 0; i < impls.size(); ++i)
    for (const property* p : properties_of(impls[i]->kind))
      if (fnmatch(o.property_glob.c_str(), p->name.c_str(), 0) == 0 && o.shard.has(k++))
        cells.push_back({i, impls[i], p});
  const auto run = [&](const gate_cell& c, std::ostream& out) {
    property_report pr = run_cell(*c.impl, *c.prop, o, store, out);
    out << "  " << c.impl->name << " / " << c.prop->name << ": " << to_string(pr.result) << " (" << pr.cases
        << " cases, " << pr.seconds << " s)\n";
    return pr;
  };
  std::vector<property_report> reports;
  if (o.jobs > 1 && cells.size() > 1) {
    reports = run_cells_parallel(cells, o.jobs, run, log);
  } else {
    for (const gate_cell& c : cells)
      if (reports.push_back(run(c, log)); !reports.back().stopped.empty()) break;
  }
  // A signal or the run's deadline ends the matrix at the first cell it stopped, whatever ran after it.
  const auto first_stopped =
      std::find_if(reports.begin(), reports.end(), [](const property_report& r) { return !r.stopped.empty(); });
  if (first_stopped != reports.end()) reports.erase(first_stopped + 1, reports.end());
  std::vector<impl_report> out;
  for (const implementation* impl : impls) out.push_back({impl, {}});
  for (std::size_t c = 0; c < reports.size(); ++c) out[cells[c].impl_index].properties.push_back(std::move(reports[c]));
  std::erase_if(out, [](const impl_report& r) { return r.properties.empty(); });
  return out;
}

}  // namespace kvconform
