// Gate outputs: the terminal matrix, JUnit XML and JSON, always valid, even for a partial run.
#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "properties/runners/gate.h"
#include "properties/trace/file_io.h"
#include "properties/trace/utf8.h"

namespace kvconform {

namespace {
/// Correct code measures below ~0.04 of the bound (about 0.25 for bf16-like); above 0.5 it is
/// halfway to failing and deserves a look.
constexpr double warn_ratio = 0.5;

std::string ratio_text(const property_report& p) {
  if (p.stats.numeric == 0) return "-";
  std::ostringstream s;
  s << std::setprecision(2) << std::scientific << p.stats.worst_ratio;
  return s.str();
}

/// The reported (never judged) end-to-end figure of a cache whose storage rounds (docs/numerics.md §6.4).
std::string end_to_end_text(const property_report& p) {
  if (p.stats.end_to_end == 0) return "";
  std::ostringstream s;
  s << "  end-to-end " << std::setprecision(2) << std::scientific << p.stats.worst_end_to_end;
  return s.str();
}

std::string xml_escape(const std::string& raw) {
  const std::string in = valid_utf8(raw);
  std::string out;
  for (char c : in) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

std::string trace_listing(const trace& t, std::size_t fail_at) {
  std::ostringstream s;
  s << "    " << describe(t.config) << ", " << t.ops.size() << " op" << (t.ops.size() == 1 ? "" : "s") << ":\n";
  for (std::size_t i = 0; i < t.ops.size(); ++i)
    s << "    " << std::setw(3) << i << "  " << describe(t.ops[i]) << (i == fail_at ? "   <- fails here" : "") << "\n";
  return s.str();
}

/// Counts of a run's cells by status.
struct tally {
  int passed = 0, failed = 0, unsupported = 0, interrupted = 0;
  double seconds = 0;
  explicit tally(const std::vector<property_report>& cells) {
    for (const auto& p : cells)
      passed += p.result == status::pass, failed += p.result == status::fail,
          unsupported += p.result == status::not_supported, interrupted += p.result == status::interrupted,
          seconds += p.seconds;
  }
};

std::vector<property_report> all_cells(const std::vector<impl_report>& r) {
  std::vector<property_report> cells;
  for (const auto& i : r) cells.insert(cells.end(), i.properties.begin(), i.properties.end());
  return cells;
}
}  // namespace

namespace {
/// Details under the matrix: each failure with its trace and replay command, each NOT SUPPORTED reason.
void print_details(const impl_report& i, const property_report& p, std::ostream& out) {
  const std::string cell = valid_utf8(i.impl->name) + " / " + p.property;
  if (p.result == status::not_supported) out << "\nNOT SUPPORTED " << cell << ": " << valid_utf8(p.message) << "\n";
  if (p.result != status::fail) return;
  out << "\nFAIL " << cell << ": " << valid_utf8(p.message) << "\n";
  if (p.source.rfind("generated", 0) != 0 && p.source != "fixed") out << "  (a stored failure that still fails)\n";
  if (p.counterexample) out << trace_listing(*p.counterexample, p.fail ? p.fail->op_index : SIZE_MAX);
  if (p.fail && p.counterexample && p.counterexample->drive_seed && p.fail->op_index >= p.counterexample->ops.size())
    out << "    (it fails at op " << p.fail->op_index << ", which the driver reached beyond the saved ops)\n";
  if (!p.saved_path.empty())
    out << "  saved:  " << valid_utf8(p.saved_path) << "\n  replay: " << valid_utf8(p.replay) << "\n";
  if (!p.save_error.empty()) out << "  NOT SAVED: " << valid_utf8(p.save_error) << "\n";
}

/// Each required event a guarded row never hit: what, where, and how to see the statistics again.
void print_gaps(const impl_report& i, std::ostream& out) {
  std::size_t traces = 0;
  for (const auto& p : i.properties) traces += p.coverage.traces;
  for (const std::string& e : i.missing)
    out << "\nCOVERAGE " << valid_utf8(i.impl->name) << ": the required event \"" << e << "\" never occurred in the "
        << traces << " traces of its " << i.properties.size()
        << " properties: a generator no longer makes it (docs/design.md §4.6)\n  replay: " << valid_utf8(i.rerun)
        << "\n";
}
}  // namespace

void print_report(const std::vector<impl_report>& r, std::ostream& out) {
  std::size_t name_w = 14, prop_w = 8;
  for (const auto& i : r) {
    name_w = std::max(name_w, i.impl->name.size());
    for (const auto& p : i.properties) prop_w = std::max(prop_w, p.property.size());
  }
  const auto name_col = static_cast<int>(name_w) + 2, prop_col = static_cast<int>(prop_w) + 2;
  out << std::left << std::setw(name_col) << "implementation" << std::setw(prop_col) << "property" << std::setw(15)
      << "status" << std::right << std::setw(7) << "cases"
      << "  worst err/bound\n";
  for (const auto& i : r)
    for (const auto& p : i.properties)
      out << std::left << std::setw(name_col) << valid_utf8(i.impl->name) << std::setw(prop_col) << p.property
          << std::setw(15) << to_string(p.result) << std::right << std::setw(7) << p.cases << "  " << ratio_text(p)
          << (p.stats.worst_ratio > warn_ratio ? "  WARN: above 0.5" : "") << end_to_end_text(p) << "\n";
  for (const auto& i : r)
    for (const auto& p : i.properties) print_details(i, p, out);
  for (const auto& i : r) print_gaps(i, out);
  const tally t(all_cells(r));
  out << "\n" << t.passed << " passed, " << t.failed << " failed, " << t.unsupported << " not supported";
  if (t.interrupted) out << ", " << t.interrupted << " interrupted";
  if (const std::size_t gaps = coverage_gaps(r))
    out << ", " << gaps << " required event" << (gaps > 1 ? "s" : "") << " missed";
  out << "\n";
  if (const std::string why = partial_reason(r); !why.empty())
    out << "INTERRUPTED: " << why << "; the matrix above is partial (the failures it shows are saved)\n";
}

namespace {
/// One <testcase>: its properties, and a <failure>, <skipped> or <error> (INTERRUPTED) element.
void junit_case(const impl_report& i, const property_report& p, std::ostringstream& x) {
  x << "    <testcase classname=\"kvconform." << xml_escape(i.impl->name) << "\" name=\"" << xml_escape(p.property)
    << "\" time=\"" << p.seconds << "\">\n";
  x << "      <properties><property name=\"cases\" value=\"" << p.cases
    << "\"/><property name=\"worst_err_over_bound\" value=\"" << p.stats.worst_ratio << "\"/></properties>\n";
  if (p.result == status::not_supported)
    x << "      <skipped message=\"NOT SUPPORTED: " << xml_escape(p.message) << "\"/>\n";
  if (p.result == status::interrupted) x << "      <error message=\"INTERRUPTED: " << xml_escape(p.message) << "\"/>\n";
  if (p.result == status::fail) {
    x << "      <failure type=\"" << xml_escape(p.fail ? p.fail->check : "error") << "\" message=\""
      << xml_escape(p.message) << "\">";
    if (p.counterexample) x << xml_escape(trace_listing(*p.counterexample, p.fail ? p.fail->op_index : SIZE_MAX));
    if (!p.saved_path.empty()) x << xml_escape("replay: " + p.replay);
    if (!p.save_error.empty()) x << xml_escape("\nNOT SAVED: " + p.save_error);
    x << "</failure>\n";
  }
  x << "    </testcase>\n";
}

/// A <testcase> "coverage" that fails, for a row that missed required events.
void junit_gaps(const impl_report& i, std::ostringstream& x) {
  if (i.missing.empty()) return;
  std::string names;
  for (const std::string& e : i.missing) names += (names.empty() ? "" : ", ") + e;
  x << "    <testcase classname=\"kvconform." << xml_escape(i.impl->name) << "\" name=\"coverage\" time=\"0\">\n"
    << "      <failure type=\"coverage\" message=\"required events never occurred: " << xml_escape(names) << "\">"
    << xml_escape("replay: " + i.rerun) << "</failure>\n    </testcase>\n";
}

std::size_t rows_with_gaps(const std::vector<impl_report>& r) {
  return static_cast<std::size_t>(
      std::count_if(r.begin(), r.end(), [](const impl_report& i) { return !i.missing.empty(); }));
}
}  // namespace

void write_junit(const std::vector<impl_report>& r, const std::string& path) {
  std::ostringstream x;
  const tally all(all_cells(r));
  const std::string partial = partial_reason(r);
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kvconform"
    << (partial.empty() ? "" : " (partial: " + xml_escape(partial) + ")") << "\" tests=\""
    << all.passed + all.failed + all.unsupported + all.interrupted + rows_with_gaps(r) << "\" failures=\""
    << all.failed + rows_with_gaps(r) << "\" errors=\"" << all.interrupted << "\" skipped=\"" << all.unsupported
    << "\" time=\"" << all.seconds << "\">\n";
  for (const auto& i : r) {
    const tally t(i.properties);
    const bool gaps = !i.missing.empty();
    x << "  <testsuite name=\"" << xml_escape(i.impl->name) << "\" tests=\"" << i.properties.size() + gaps
      << "\" failures=\"" << t.failed + gaps << "\" errors=\"" << t.interrupted << "\" skipped=\"" << t.unsupported
      << "\" time=\"" << t.seconds << "\">\n";
    if (!partial.empty())
      x << "    <properties><property name=\"partial\" value=\"" << xml_escape(partial) << "\"/></properties>\n";
    for (const auto& p : i.properties) junit_case(i, p, x);
    junit_gaps(i, x);
    x << "  </testsuite>\n";
  }
  x << "</testsuites>\n";
  write_whole(path, x.str());
}

namespace {
/// The events a cell's traces hit (those hit at least once), by name.
nlohmann::json cell_events(const property_report& p, const std::vector<event>& events) {
  nlohmann::json hit = nlohmann::json::object();
  for (std::size_t e = 0; e < events.size(); ++e)
    if (p.coverage.count(e)) hit[events[e].name] = p.coverage.count(e);
  return {{"traces", p.coverage.traces}, {"events", hit}};
}

/// An implementation's coverage over its row: every event with its traces, and the guard's verdict.
nlohmann::json row_coverage(const impl_report& i) {
  const std::vector<event>& events = events_of(i.impl->kind);
  coverage_counts total;
  for (const auto& p : i.properties) total.merge(p.coverage);
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t e = 0; e < events.size(); ++e)
    list.push_back({{"name", events[e].name},
                    {"summary", events[e].summary},
                    {"required", events[e].required},
                    {"applies", event_applies(events[e], *i.impl)},
                    {"traces", total.count(e)}});
  return {{"traces", total.traces},
          {"guarded", i.guarded},
          {"missing", i.missing},
          {"rerun", valid_utf8(i.rerun)},
          {"events", list}};
}

nlohmann::json cell_json(const property_report& p) {
  nlohmann::json jp = {
      {"name", p.property},         {"status", to_string(p.result)},      {"cases", p.cases},
      {"decodes", p.stats.decodes}, {"numeric_decodes", p.stats.numeric}, {"worst_err_over_bound", p.stats.worst_ratio},
      {"seconds", p.seconds}};
  if (p.stats.end_to_end) jp["worst_end_to_end_over_bound"] = p.stats.worst_end_to_end;
  if (!p.message.empty()) jp["message"] = valid_utf8(p.message);
  if (p.fail)
    jp["failure"] = {
        {"check", p.fail->check}, {"op_index", p.fail->op_index}, {"signature", valid_utf8(p.fail->signature())}};
  if (!p.saved_path.empty()) jp["trace"] = valid_utf8(p.saved_path), jp["replay"] = valid_utf8(p.replay);
  if (!p.save_error.empty()) jp["save_error"] = valid_utf8(p.save_error);
  return jp;
}
}  // namespace

void write_json(const std::vector<impl_report>& r, const std::string& path) {
  const std::string partial = partial_reason(r);
  nlohmann::json j = {{"schema", "kvconform-gate"},
                      {"version", 1},
                      {"partial", !partial.empty()},
                      {"implementations", nlohmann::json::array()}};
  if (!partial.empty()) j["stopped"] = partial;
  for (const auto& i : r) {
    nlohmann::json ji = {{"name", valid_utf8(i.impl->name)},
                         {"kind", to_string(i.impl->kind)},
                         {"group", to_string(i.impl->group)},
                         {"profile", i.impl->profile.describe()},
                         {"properties", nlohmann::json::array()}};
    for (const auto& p : i.properties) {
      ji["properties"].push_back(cell_json(p));
      ji["properties"].back()["coverage"] = cell_events(p, events_of(i.impl->kind));
    }
    ji["coverage"] = row_coverage(i);
    j["implementations"].push_back(std::move(ji));
  }
  write_whole(path, j.dump(2) + "\n");
}

bool write_report_files(const std::vector<impl_report>& r, const std::string& junit, const std::string& json,
                        std::ostream& err) {
  bool written = true;
  for (const auto& [path, write] : {std::pair{junit, &write_junit}, std::pair{json, &write_json}}) {
    if (path.empty()) continue;
    try {
      write(r, path);
    } catch (const file_error& e) {
      err << "kvconform: " << valid_utf8(e.what()) << "\n", written = false;
    }
  }
  for (const auto& i : r)
    for (const auto& p : i.properties)
      if (!p.save_error.empty())
        err << "kvconform: a failure was not saved: " << valid_utf8(p.save_error) << "\n", written = false;
  return written;
}

}  // namespace kvconform
