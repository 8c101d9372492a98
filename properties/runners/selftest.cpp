// The kill matrix: for each mutant the property that killed it first and the cases it took.
#include "properties/runners/selftest.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <numeric>
#include <nlohmann/json.hpp>
#include <ostream>

#include "properties/executor/stop.h"
#include "properties/trace/file_io.h"

namespace kvconform {

namespace {
/// A variant must stay well inside the bound: correct code measures below ~0.1 of it.
constexpr double variant_ratio_limit = 0.5;

int median_of(std::vector<int> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int mutant_result::median() const { return median_of(cases_to_kill); }
int mutant_result::worst() const {
  return cases_to_kill.empty() ? -1 : *std::max_element(cases_to_kill.begin(), cases_to_kill.end());
}

int selftest_report::median_cases_to_kill() const {
  std::vector<int> m;
  for (const auto& r : mutants) m.push_back(r.median());
  return median_of(m);
}
int selftest_report::worst_cases_to_kill() const {
  int w = 0;
  for (const auto& r : mutants) w = std::max(w, r.worst());
  return w;
}
bool selftest_report::ok() const {
  for (const auto& m : mutants)
    if (m.killed < m.seeds) return false;
  for (const auto& v : variants)
    if (!v.passed || v.worst_ratio > variant_ratio_limit) return false;
  return true;
}

namespace {
/// The properties `impl` can run: those whose capabilities it has. The others are NOT SUPPORTED,
/// exactly as in the gate: never a kill for a mutant, never held against a variant.
std::vector<const property*> runnable(const implementation& impl, std::vector<std::string>* skipped = nullptr) {
  std::vector<const property*> out;
  for (const property* p : properties_of(impl.kind)) {
    if (impl.unavailable.empty() && !p->needs.missing_from(impl.capabilities) &&
        !(p->plain_attention && !impl.profile.attention.plain()))
      out.push_back(p);
    else if (skipped)
      skipped->push_back(p->name);
  }
  return out;
}

mutant_result run_mutant(const implementation& impl, const run_options& base, int seeds) {
  mutant_result m;
  m.impl = &impl;
  std::map<std::string, int> first_counts;
  std::vector<int> expected_cases;
  for (int s = 0; s < seeds && stop_signal() == 0; ++s) {
    run_options o = base;
    o.seed = base.seed + static_cast<std::uint64_t>(s);
    o.shrink = false;
    // The first killer is the property that kills in fewest cases, the earliest in table order among equals. The
    // registered killer runs first, and then each other property only as far as it could still be that: as many
    // cases as the best so far if it comes before it in the table, one fewer if after (a run's cases are the same
    // whatever its limit, up to the limit: run_options::case_limit).
    const std::vector<const property*> props = runnable(impl);
    std::vector<std::size_t> order(props.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return props[i]->name == impl.killer; });
    int best = -1;
    std::size_t best_at = 0;
    for (const std::size_t i : order) {
      o.case_limit = best < 0 ? 0 : (i < best_at ? best : best - 1);
      if (best >= 0 && o.case_limit <= 0) continue;  // it would have to kill in no cases
      const property_run run = run_property(*props[i], impl, o);
      if (stop_signal() != 0) return m;  // a case cut short by the signal kills nothing; the seed is not counted
      if (!run.fail && run.error.empty()) continue;
      if (best < 0 || run.cases < best || (run.cases == best && i < best_at)) best = run.cases, best_at = i;
      if (props[i]->name == impl.killer) expected_cases.push_back(run.cases);
    }
    const std::string best_name = best < 0 ? "" : props[best_at]->name;
    ++m.seeds;
    if (best < 0) continue;
    ++m.killed;
    m.cases_to_kill.push_back(best);
    ++first_counts[best_name];
  }
  for (const auto& [name, count] : first_counts)
    if (m.first_killer.empty() || count > first_counts[m.first_killer]) m.first_killer = name;
  m.expected_killer_median = median_of(expected_cases);
  return m;
}

variant_result run_variant(const implementation& impl, const run_options& base) {
  variant_result v;
  v.impl = &impl;
  for (const property* p : runnable(impl, &v.not_supported)) {
    const property_run run = run_property(*p, impl, base);
    if (stop_signal() != 0) break;
    v.worst_ratio = std::max({v.worst_ratio, run.stats.worst_ratio, run.search_stats.worst_ratio});
    if ((run.fail || !run.error.empty()) && v.passed)
      v.passed = false, v.failed_property = p->name,
      v.message = run.fail ? run.fail->signature() + ": " + run.fail->message : run.error;
  }
  return v;
}
}  // namespace

selftest_report run_selftest(const std::vector<implementation>& impls, const run_options& base, int seeds,
                             std::ostream& log) {
  selftest_report r;
  for (const implementation& impl : impls) {
    if (stop_signal() != 0) break;  // SIGINT/SIGTERM: the rows so far, marked partial by the caller
    if (impl.group == impl_group::mutant) {
      r.mutants.push_back(run_mutant(impl, base, seeds));
      log << "  mutant " << impl.name << ": killed on " << r.mutants.back().killed << "/" << r.mutants.back().seeds
          << " seeds\n";
    } else if (impl.group == impl_group::variant) {
      r.variants.push_back(run_variant(impl, base));
      log << "  variant " << impl.name << ": " << (r.variants.back().passed ? "PASS" : "FAIL") << "\n";
    }
  }
  return r;
}

void print_selftest(const selftest_report& r, std::ostream& out) {
  // The name column fits the longest name, so that a long one never runs into its kind.
  std::size_t name_width = 28;
  for (const auto& m : r.mutants) name_width = std::max(name_width, m.impl->name.size() + 2);
  for (const auto& v : r.variants) name_width = std::max(name_width, v.impl->name.size() + 2);
  std::size_t killer_width = 34;  // and the first killer's fits the longest property's
  for (const auto& m : r.mutants) killer_width = std::max(killer_width, m.first_killer.size() + 2);
  const auto name = std::setw(static_cast<int>(name_width)), killer = std::setw(static_cast<int>(killer_width));
  out << std::left << name << "mutant" << std::setw(11) << "kind" << std::setw(8) << "killed" << killer
      << "first killer" << std::setw(16) << "cases med/max"
      << "registered killer (median cases)\n";
  int killed = 0;
  for (const auto& m : r.mutants) {
    killed += m.killed == m.seeds;
    out << std::left << name << m.impl->name << std::setw(11) << to_string(m.impl->kind) << std::setw(8)
        << (std::to_string(m.killed) + "/" + std::to_string(m.seeds)) << killer
        << (m.first_killer.empty() ? "-" : m.first_killer) << std::setw(16)
        << (std::to_string(m.median()) + " / " + std::to_string(m.worst())) << m.impl->killer << " ("
        << (m.expected_killer_median < 0 ? std::string("never failed") : std::to_string(m.expected_killer_median))
        << ")\n";
  }
  out << "\n"
      << std::left << name << "variant" << std::setw(8) << "status"
      << "worst err/bound\n";
  int passed = 0;
  for (const auto& v : r.variants) {
    const bool good = v.passed && v.worst_ratio <= variant_ratio_limit;
    passed += good;
    out << std::left << name << v.impl->name << std::setw(8) << (good ? "PASS" : "FAIL")
        << std::setprecision(3) << v.worst_ratio << (v.passed ? "" : "  " + v.failed_property + ": " + v.message)
        << (v.not_supported.empty() ? "" : "  (" + std::to_string(v.not_supported.size()) + " NOT SUPPORTED)") << "\n";
  }
  out << "\n"
      << killed << " of " << r.mutants.size() << " mutants killed on every seed (median cases to kill "
      << r.median_cases_to_kill() << ", worst " << r.worst_cases_to_kill() << "); " << passed << " of "
      << r.variants.size() << " variants pass\n";
  out << (killed + passed) << " passed, "
      << (r.mutants.size() + r.variants.size() - static_cast<std::size_t>(killed + passed)) << " failed\n";
}

void write_selftest_json(const selftest_report& r, const std::string& path) {
  nlohmann::json j = {{"schema", "kvconform-selftest"},
                      {"version", 1},
                      {"median_cases_to_kill", r.median_cases_to_kill()},
                      {"worst_cases_to_kill", r.worst_cases_to_kill()},
                      {"ok", r.ok()},
                      {"partial", stop_signal() != 0}};
  for (const auto& m : r.mutants)
    j["mutants"].push_back({{"name", m.impl->name},
                            {"kind", to_string(m.impl->kind)},
                            {"note", m.impl->note},
                            {"seeds", m.seeds},
                            {"killed", m.killed},
                            {"first_killer", m.first_killer},
                            {"cases_to_kill", m.cases_to_kill},
                            {"median", m.median()},
                            {"worst", m.worst()},
                            {"registered_killer", m.impl->killer},
                            {"registered_killer_median", m.expected_killer_median}});
  for (const auto& v : r.variants)
    j["variants"].push_back({{"name", v.impl->name},
                             {"profile", v.impl->profile.describe()},
                             {"passed", v.passed},
                             {"worst_err_over_bound", v.worst_ratio},
                             {"failed_property", v.failed_property},
                             {"message", v.message},
                             {"not_supported", v.not_supported}});
  write_whole(path, j.dump(2) + "\n");
}

}  // namespace kvconform
