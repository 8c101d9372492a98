// `gate --html`: the page, the matrix, the failures with their shrunk traces, the coverage tables.
#include "properties/runners/html_report.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "properties/runners/report_text.h"
#include "properties/trace/file_io.h"
#include "properties/trace/utf8.h"

namespace kvconform {

namespace {
/// The page's style: status colours, tables, the histograms' bars (html_histogram.cpp draws them).
constexpr const char* style = R"(body{font:14px/1.45 system-ui,sans-serif;margin:1.5em;color:#1d1d1d;max-width:110em}
h1{font-size:1.5em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ccc}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:2px 7px;text-align:left}
th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}
.pass{background:#d6f0d6}.fail{background:#f6c9c9;font-weight:bold}.unsupported{background:#ececec;color:#555}
.interrupted{background:#fde5a8}.known{background:#e8d9f5}.warn{color:#a65b00;font-weight:bold}.banner{padding:.5em;border:2px solid #c33}
pre{background:#f5f5f5;padding:.6em;overflow-x:auto}mark{background:#f6c9c9}code{background:#f5f5f5}
tr.req td:first-child{font-weight:bold}tr.missing{background:#f6c9c9}tr.na{color:#999}td.zero{color:#bbb}
th.v{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;font-size:12px}
.hists{display:flex;flex-wrap:wrap;gap:10px}figure{margin:0;border:1px solid #ddd;padding:4px 6px}
figcaption{font-size:12px;max-width:300px}svg text{font-size:9px;fill:#444}svg .bar{fill:#4a78b5}
svg .bar.near{fill:#d8901f}svg .bar.over{fill:#c62828}svg .axis{stroke:#888}
svg .limit{stroke:#c62828;stroke-dasharray:3 2})";

/// The matrix's note shows the start of a long message (a port's stderr); the failure's details show it whole.
constexpr std::size_t note_bytes = 300;

const char* status_class(status s) {
  switch (s) {
    case status::pass: return "pass";
    case status::fail: return "fail";
    case status::not_supported: return "unsupported";
    case status::interrupted: return "interrupted";
    case status::known_failure: return "known";
  }
  return "";
}

/// The anchor of a failure's details, so that its matrix cell links to them.
std::string failure_id(std::size_t impl, std::size_t prop) {
  return "fail-" + std::to_string(impl) + "-" + std::to_string(prop);
}

std::string seconds_text(double s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(2) << s;
  return o.str();
}

/// What the baseline says of a cell it lists: a known failure's reason, or that a listed cell passes now.
std::string baseline_note(const property_report& p) {
  if (!p.baseline) return "";
  const std::string reason = markup_escape(valid_utf8(*p.baseline, note_bytes));
  return p.fixed() ? "<b>FIXED</b>: the baseline lists it as a known failure (" + reason + ")"
                   : "<i>baseline: " + reason + "</i><br>";
}

/// One row of the matrix; the implementation's cell spans its properties.
void matrix_row(const std::vector<impl_report>& r, std::size_t i, std::size_t k, std::ostringstream& h) {
  const impl_report& ir = r[i];
  const property_report& p = ir.properties[k];
  h << "<tr>";
  if (k == 0)
    h << "<td rowspan=\"" << ir.properties.size() << "\"><a href=\"#impl-" << i << "\">" << markup_escape(ir.impl->name)
      << "</a><br><small>" << to_string(ir.impl->kind) << ", " << to_string(ir.impl->group) << "</small></td>";
  h << "<td>" << markup_escape(p.property) << "</td><td class=\"" << status_class(p.result) << "\">";
  if (p.result == status::fail || p.result == status::known_failure)
    h << "<a href=\"#" << failure_id(i, k) << "\">" << to_string(p.result) << "</a>";
  else
    h << to_string(p.result);
  h << "</td><td class=\"n\">" << p.cases << "</td><td class=\"n\">" << ratio_text(p.stats) << "</td><td class=\"n\">"
    << search_text(p) << "</td><td class=\"n\">"
    << (p.stats.end_to_end ? ratio_text(p.stats.worst_end_to_end) : std::string("-")) << "</td><td class=\"n secs\">"
    << seconds_text(p.seconds) << "</td><td>"
    << (highest_ratio(p) > warn_ratio ? "<span class=\"warn\">err/bound above 0.5</span> " : "") << baseline_note(p)
    << (p.result == status::pass ? "" : markup_escape(valid_utf8(p.message, note_bytes))) << "</td></tr>\n";
}

void matrix(const std::vector<impl_report>& r, std::ostringstream& h) {
  h << "<h2 id=\"matrix\">Matrix</h2>\n<table class=\"matrix\"><thead><tr><th>implementation</th><th>property</th>"
       "<th>status</th><th>cases</th><th>worst err/bound</th><th>searched (traces)</th><th>end-to-end</th>"
       "<th>seconds</th><th>note</th></tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < r.size(); ++i)
    for (std::size_t k = 0; k < r[i].properties.size(); ++k) matrix_row(r, i, k, h);
  h << "</tbody></table>\n<p><small>worst err/bound: over the random cases' decodes (the bound of "
       "docs/numerics.md §3; above 1 fails); searched: the targeted numeric search's highest (docs/numerics.md "
       "§4.4); end-to-end: reported, never judged (docs/numerics.md §6.4).</small></p>\n";
}

/// A shrunk trace, one op a line, the op it fails at marked.
void trace_block(const trace& t, std::size_t fail_at, std::ostringstream& h) {
  h << "<pre>" << markup_escape(describe(t.config)) << ", " << t.ops.size() << " op" << (t.ops.size() == 1 ? "" : "s")
    << ":\n";
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    std::ostringstream line;
    line << std::setw(3) << i << "  " << describe(t.ops[i]) << (i == fail_at ? "   <- fails here" : "");
    h << (i == fail_at ? "<mark>" : "") << markup_escape(line.str()) << (i == fail_at ? "</mark>" : "") << "\n";
  }
  h << "</pre>\n";
}

void failure_block(const impl_report& i, const property_report& p, const std::string& id, std::ostringstream& h) {
  h << "<section id=\"" << id << "\"><h3>" << to_string(p.result) << " " << markup_escape(i.impl->name) << " / "
    << markup_escape(p.property) << "</h3>\n<p>" << markup_escape(p.message) << "</p>\n";
  if (p.result == status::known_failure)
    h << "<p>A known failure: the baseline lists it (" << markup_escape(*p.baseline) << ").</p>\n";
  if (p.source.rfind("generated", 0) != 0 && p.source != "fixed") h << "<p>A stored failure that still fails.</p>\n";
  if (p.source == "generated by the targeted search")
    h << "<p>Found by the targeted numeric search after " << p.cases - p.search_cases << " random cases.</p>\n";
  const std::size_t fail_at = p.fail ? p.fail->op_index : SIZE_MAX;
  if (p.counterexample) trace_block(*p.counterexample, fail_at, h);
  if (p.fail && p.counterexample && p.counterexample->drive_seed && fail_at >= p.counterexample->ops.size())
    h << "<p>It fails at op " << fail_at << ", which the driver reached beyond the saved ops.</p>\n";
  if (!p.saved_path.empty())
    h << "<p>saved: <code>" << markup_escape(p.saved_path) << "</code><br>replay: <code>" << markup_escape(p.replay)
      << "</code></p>\n";
  else if (p.save_error.empty() && p.counterexample)
    h << "<p>Not saved: the regression store is disabled.</p>\n";
  if (!p.save_error.empty()) h << "<p class=\"warn\">NOT SAVED: " << markup_escape(p.save_error) << "</p>\n";
  h << "</section>\n";
}

void failures(const std::vector<impl_report>& r, std::ostringstream& h) {
  if (const tally t(all_cells(r)); t.failed + t.known == 0) return;
  h << "<h2 id=\"failures\">Failures</h2>\n";
  for (std::size_t i = 0; i < r.size(); ++i)
    for (std::size_t k = 0; k < r[i].properties.size(); ++k)
      if (const status s = r[i].properties[k].result; s == status::fail || s == status::known_failure)
        failure_block(r[i], r[i].properties[k], failure_id(i, k), h);
}

/// Each required event a guarded row never hit, with the command that shows the statistics again.
void gaps(const std::vector<impl_report>& r, std::ostringstream& h) {
  if (coverage_gaps(r) == 0) return;
  h << "<h2 id=\"gaps\">Coverage gaps</h2>\n<ul>\n";
  for (const impl_report& i : r)
    for (const std::string& e : i.missing)
      h << "<li><b>" << markup_escape(i.impl->name) << "</b>: the required event \"" << markup_escape(e)
        << "\" never occurred in its " << row_total(i).traces
        << " traces: a generator no longer makes it (docs/design.md §4.6). replay: <code>" << markup_escape(i.rerun)
        << "</code></li>\n";
  h << "</ul>\n";
}
}  // namespace

namespace {
/// One event's row: its name (bold when required), its share of the row's traces, its count per property.
void coverage_row(const impl_report& i, const event& e, std::size_t index, std::size_t traces, std::size_t hits,
                  std::ostringstream& h) {
  const bool applies = event_applies(e, *i.impl);
  const bool missing = std::find(i.missing.begin(), i.missing.end(), e.name) != i.missing.end();
  h << "<tr class=\"" << (missing ? "missing " : "")
    << (e.required && applies ? "req"
        : applies             ? ""
                              : "na")
    << "\"><td title=\"" << markup_escape(e.summary) << "\">" << (e.required && applies ? "* " : "")
    << markup_escape(e.name) << (missing ? " (MISSING)" : "") << "</td><td class=\"n\">"
    << (applies ? share(hits, traces) : "does not apply") << "</td>";
  for (const property_report& p : i.properties)
    h << "<td class=\"n" << (p.coverage.count(index) ? "" : " zero") << "\">" << p.coverage.count(index) << "</td>";
  h << "</tr>\n";
}

void coverage_table(const impl_report& i, std::ostringstream& h) {
  const coverage_counts total = row_total(i);
  if (total.traces == 0) return;
  const std::vector<event>& events = events_of(i.impl->kind);
  h << "<details" << (i.missing.empty() ? "" : " open") << "><summary>Coverage: " << total.traces << " traces, "
    << events.size() << " events; " << (i.guarded ? "held by the guard" : "not held by the guard") << ", "
    << (i.missing.empty() ? "no required event missed" : std::to_string(i.missing.size()) + " required MISSING")
    << "</summary>\n<p><small>Traces that hit each event (hover an event for what counts); * required in a quick "
       "run of the whole row (docs/design.md §4.6).</small></p>\n<table class=\"cov\"><thead><tr><th>event</th>"
       "<th>all traces</th>";
  for (const property_report& p : i.properties) h << "<th class=\"v\">" << markup_escape(p.property) << "</th>";
  h << "</tr></thead>\n<tbody>\n";
  for (std::size_t e = 0; e < events.size(); ++e) coverage_row(i, events[e], e, total.traces, total.count(e), h);
  h << "</tbody></table></details>\n";
}

void implementation_section(const impl_report& i, std::size_t index, std::ostringstream& h) {
  h << "<h2 id=\"impl-" << index << "\">" << markup_escape(i.impl->name) << "</h2>\n<p>" << to_string(i.impl->kind)
    << ", " << to_string(i.impl->group) << "; " << markup_escape(i.impl->profile.describe()) << "</p>\n";
  h << histogram_section(i);
  coverage_table(i, h);
}

void summary(const std::vector<impl_report>& r, std::ostringstream& h) {
  h << "<h1>kvconform gate</h1>\n<p>" << counts_text(tally(all_cells(r)));
  if (const std::size_t g = coverage_gaps(r)) h << ", " << g << " required event" << (g > 1 ? "s" : "") << " missed";
  h << "</p>\n";
  if (const std::string why = partial_reason(r); !why.empty())
    h << "<p class=\"banner\">INTERRUPTED: " << markup_escape(why)
      << "; the matrix is partial (the failures it shows are saved).</p>\n";
}
}  // namespace

std::string html_report(const std::vector<impl_report>& r) {
  std::ostringstream h;
  const tally t(all_cells(r));
  h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
       "<meta name=\"viewport\" content=\"width=device-width\">\n<title>kvconform gate: "
    << t.passed << " passed, " << t.failed << " failed</title>\n<style>" << style << "</style></head>\n<body>\n";
  summary(r, h);
  matrix(r, h);
  failures(r, h);
  gaps(r, h);
  for (std::size_t i = 0; i < r.size(); ++i) implementation_section(r[i], i, h);
  h << "</body></html>\n";
  return h.str();
}

void write_html(const std::vector<impl_report>& r, const std::string& path) { write_whole(path, html_report(r)); }

}  // namespace kvconform
