// The coverage statistics of a gate run (`gate --stats`) and the guard on each kind's required events.
#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "properties/runners/gate.h"
#include "properties/runners/report_text.h"
#include "properties/trace/utf8.h"

namespace kvconform {

coverage_counts row_total(const impl_report& i) {
  coverage_counts total;
  for (const property_report& p : i.properties) total.merge(p.coverage);
  return total;
}

std::string share(std::size_t hits, std::size_t traces) {
  std::ostringstream s;
  s << hits << "/" << traces;
  if (traces) s << " (" << (100 * hits + traces / 2) / traces << "%)";
  return s.str();
}

namespace {
void print_row_coverage(const impl_report& i, std::ostream& out) {
  const std::vector<event>& events = events_of(i.impl->kind);
  const coverage_counts total = row_total(i);
  out << "\ncoverage of " << valid_utf8(i.impl->name) << ": traces that hit each event (\"all\": of every trace; "
      << "P1..: of each property's traces; * required in a quick run)\n";
  for (std::size_t p = 0; p < i.properties.size(); ++p)
    out << "  P" << p + 1 << " " << i.properties[p].property << " (" << i.properties[p].coverage.traces << " traces)\n";
  std::size_t name_w = 5;
  for (const event& e : events) name_w = std::max(name_w, std::string(e.name).size());
  const auto name_col = static_cast<int>(name_w) + 4;
  out << std::left << std::setw(name_col) << "  event" << std::setw(18) << "all" << std::right;
  for (std::size_t p = 0; p < i.properties.size(); ++p) out << std::setw(6) << "P" + std::to_string(p + 1);
  out << "\n";
  for (std::size_t e = 0; e < events.size(); ++e) {
    const bool applies = event_applies(events[e], *i.impl);
    const bool missing = std::find(i.missing.begin(), i.missing.end(), events[e].name) != i.missing.end();
    out << (events[e].required && applies ? "* " : "  ") << std::left << std::setw(name_col - 2) << events[e].name
        << std::setw(18) << (applies ? share(total.count(e), total.traces) : "does not apply") << std::right;
    for (const property_report& p : i.properties) out << std::setw(6) << p.coverage.count(e);
    out << (missing ? "  MISSING" : "") << "\n";
  }
}
}  // namespace

void guard_coverage(std::vector<impl_report>& r, const gate_options& o) {
  for (impl_report& i : r) {
    i.rerun = o.rerun_hint(*i.impl);
    const bool whole = i.properties.size() == properties_of(i.impl->kind).size();
    const bool clean = std::none_of(i.properties.begin(), i.properties.end(), [](const property_report& p) {
      return p.result == status::fail || p.result == status::known_failure || p.result == status::interrupted;
    });
    const coverage_counts total = row_total(i);
    i.guarded = o.coverage_guard && whole && clean && total.traces > 0;
    if (!i.guarded) continue;
    const std::vector<event>& events = events_of(i.impl->kind);
    for (std::size_t e = 0; e < events.size(); ++e)
      if (events[e].required && event_applies(events[e], *i.impl) && total.count(e) == 0)
        i.missing.emplace_back(events[e].name);
  }
}

std::size_t coverage_gaps(const std::vector<impl_report>& r) {
  std::size_t gaps = 0;
  for (const impl_report& i : r) gaps += i.missing.size();
  return gaps;
}

void print_coverage(const std::vector<impl_report>& r, std::ostream& out) {
  for (const impl_report& i : r)
    if (row_total(i).traces > 0) print_row_coverage(i, out);
}

}  // namespace kvconform
