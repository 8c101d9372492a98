// Gate orchestration: selection, the regression store, and saving failures.
#include "properties/runners/gate.h"

#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "properties/runners/parallel.h"
#include "properties/trace/trace_json.h"

namespace kvconform {

namespace {
namespace fs = std::filesystem;

/// Content-addressed name, so the same minimal trace found twice is stored once.
std::string store_path(const std::string& store, const std::string& impl, const std::string& property, const trace& t) {
  return (fs::path(store) / impl / (property + "-" + content_hash(to_json(t)).substr(0, 12) + ".json")).string();
}

/// The first stored trace for (impl, property) that still fails, if any.
std::optional<std::pair<std::string, verdict>> replay_store(const std::string& store, const implementation& impl,
                                                            const property& p, std::ostream& log) {
  const fs::path dir = fs::path(store) / impl.name;
  std::error_code ec;
  if (store.empty() || !fs::is_directory(dir, ec)) return std::nullopt;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json" && e.path().filename().string().rfind(p.name + "-", 0) == 0)
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    try {
      const trace t = load_trace(f.string());
      if (t.property != p.name) continue;
      const verdict v = check_trace(&p, t, impl);
      log << "  replayed stored " << f.string() << ": " << (v.ok() ? "passes now" : "still fails") << "\n";
      if (!v.ok()) return std::pair{f.string(), v};
    } catch (const std::exception& e) {
      log << "  warning: skipped unreadable stored trace " << e.what() << "\n";
    }
  }
  return std::nullopt;
}
}  // namespace

const char* to_string(status s) {
  switch (s) {
    case status::pass: return "PASS";
    case status::fail: return "FAIL";
    case status::not_supported: return "NOT SUPPORTED";
  }
  return "?";
}

std::vector<std::string> registry_problems(const std::vector<implementation>& impls) {
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < impls.size(); ++i) {
    const implementation& impl = impls[i];
    for (std::size_t j = 0; j < i; ++j)
      if (impls[j].name == impl.name) problems.push_back("two implementations are named \"" + impl.name + "\"");
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

namespace {
/// One cell: NOT SUPPORTED, a stored failure that still fails, or a generated run.
property_report run_cell(const implementation& impl, const property& p, const gate_options& o, std::ostream& log) {
  property_report pr;
  pr.property = p.name;
  const auto start = std::chrono::steady_clock::now();
  if (const auto missing = p.needs.missing_from(impl.capabilities)) {
    pr.result = status::not_supported;
    pr.message = std::string("needs capability \"") + to_string(*missing) + "\"";
  } else if (auto stored = replay_store(o.store, impl, p, log)) {
    pr.result = status::fail, pr.cases = 0, pr.source = stored->first;
    pr.fail = stored->second.fail, pr.stats = stored->second.stats;
    pr.counterexample = load_trace(stored->first), pr.saved_path = stored->first,
    pr.replay = o.replay_hint(stored->first);
  } else {
    property_run run = run_property(p, impl, o.run);
    pr.cases = run.cases, pr.stats = run.stats, pr.fail = run.fail;
    pr.source = p.fixed ? "fixed" : "generated";
    if (!run.error.empty()) pr.result = status::fail, pr.message = run.error;
    if (run.fail) {
      pr.result = status::fail;
      run.counterexample->implementation = impl.name;
      run.counterexample->property = p.name;
      run.counterexample->note = run.fail->signature() + ": " + run.fail->message;
      pr.counterexample = std::move(run.counterexample);
      if (!o.store.empty()) {
        pr.saved_path = store_path(o.store, impl.name, p.name, *pr.counterexample);
        save_trace(*pr.counterexample, pr.saved_path);
        pr.replay = o.replay_hint(pr.saved_path);
      }
    }
  }
  if (pr.fail) pr.message = pr.fail->signature() + ": " + pr.fail->message;
  pr.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log << "  " << impl.name << " / " << p.name << ": " << to_string(pr.result) << " (" << pr.cases << " cases, "
      << pr.seconds << " s)\n";
  return pr;
}
}  // namespace

std::vector<impl_report> run_gate(const std::vector<const implementation*>& impls, const gate_options& o,
                                  std::ostream& log) {
  std::vector<gate_cell> cells;
  std::size_t k = 0;  // cells in matrix order, before sharding
  for (std::size_t i = 0; i < impls.size(); ++i)
    for (const property* p : properties_of(impls[i]->kind))
      if (fnmatch(o.property_glob.c_str(), p->name.c_str(), 0) == 0 && o.shard.has(k++))
        cells.push_back({i, impls[i], p});
  const auto run = [&](const gate_cell& c, std::ostream& out) { return run_cell(*c.impl, *c.prop, o, out); };
  std::vector<property_report> reports;
  if (o.jobs > 1 && cells.size() > 1)
    reports = run_cells_parallel(cells, o.jobs, run, log);
  else
    for (const gate_cell& c : cells) reports.push_back(run(c, log));
  std::vector<impl_report> out;
  for (const implementation* impl : impls) out.push_back({impl, {}});
  for (std::size_t c = 0; c < cells.size(); ++c) out[cells[c].impl_index].properties.push_back(std::move(reports[c]));
  return out;
}

}  // namespace kvconform
