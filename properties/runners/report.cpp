// Gate outputs: the terminal matrix, JUnit XML and JSON.
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "properties/runners/gate.h"

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

std::string xml_escape(const std::string& in) {
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

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}
}  // namespace

void print_report(const std::vector<impl_report>& r, std::ostream& out) {
  std::size_t name_w = 14, prop_w = 8;
  for (const auto& i : r) {
    name_w = std::max(name_w, i.impl->name.size());
    for (const auto& p : i.properties) prop_w = std::max(prop_w, p.property.size());
  }
  out << std::left << std::setw(static_cast<int>(name_w) + 2) << "implementation"
      << std::setw(static_cast<int>(prop_w) + 2) << "property" << std::setw(15) << "status" << std::right
      << std::setw(7) << "cases"
      << "  worst err/bound\n";
  int passed = 0, failed = 0, unsupported = 0;
  for (const auto& i : r)
    for (const auto& p : i.properties) {
      out << std::left << std::setw(static_cast<int>(name_w) + 2) << i.impl->name
          << std::setw(static_cast<int>(prop_w) + 2) << p.property << std::setw(15) << to_string(p.result) << std::right
          << std::setw(7) << p.cases << "  " << ratio_text(p)
          << (p.stats.worst_ratio > warn_ratio ? "  WARN: above 0.5" : "") << end_to_end_text(p) << "\n";
      passed += p.result == status::pass, failed += p.result == status::fail,
          unsupported += p.result == status::not_supported;
    }
  for (const auto& i : r)
    for (const auto& p : i.properties) {
      if (p.result == status::not_supported)
        out << "\nNOT SUPPORTED " << i.impl->name << " / " << p.property << ": " << p.message << "\n";
      if (p.result != status::fail) continue;
      out << "\nFAIL " << i.impl->name << " / " << p.property << ": " << p.message << "\n";
      if (p.source.rfind("generated", 0) != 0 && p.source != "fixed") out << "  (a stored failure that still fails)\n";
      if (p.counterexample) out << trace_listing(*p.counterexample, p.fail ? p.fail->op_index : SIZE_MAX);
      if (!p.saved_path.empty()) out << "  saved:  " << p.saved_path << "\n  replay: " << p.replay << "\n";
    }
  out << "\n" << passed << " passed, " << failed << " failed, " << unsupported << " not supported\n";
}

void write_junit(const std::vector<impl_report>& r, const std::string& path) {
  std::ostringstream x;
  int tests = 0, failures = 0, skipped = 0;
  double seconds = 0;
  for (const auto& i : r)
    for (const auto& p : i.properties)
      ++tests, failures += p.result == status::fail, skipped += p.result == status::not_supported, seconds += p.seconds;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kvconform\" tests=\"" << tests
    << "\" failures=\"" << failures << "\" skipped=\"" << skipped << "\" time=\"" << seconds << "\">\n";
  for (const auto& i : r) {
    int f = 0, s = 0;
    double t = 0;
    for (const auto& p : i.properties)
      f += p.result == status::fail, s += p.result == status::not_supported, t += p.seconds;
    x << "  <testsuite name=\"" << xml_escape(i.impl->name) << "\" tests=\"" << i.properties.size() << "\" failures=\""
      << f << "\" skipped=\"" << s << "\" time=\"" << t << "\">\n";
    for (const auto& p : i.properties) {
      x << "    <testcase classname=\"kvconform." << xml_escape(i.impl->name) << "\" name=\"" << xml_escape(p.property)
        << "\" time=\"" << p.seconds << "\">\n";
      x << "      <properties><property name=\"cases\" value=\"" << p.cases
        << "\"/><property name=\"worst_err_over_bound\" value=\"" << p.stats.worst_ratio << "\"/></properties>\n";
      if (p.result == status::not_supported)
        x << "      <skipped message=\"NOT SUPPORTED: " << xml_escape(p.message) << "\"/>\n";
      if (p.result == status::fail) {
        x << "      <failure type=\"" << xml_escape(p.fail ? p.fail->check : "error") << "\" message=\""
          << xml_escape(p.message) << "\">";
        if (p.counterexample) x << xml_escape(trace_listing(*p.counterexample, p.fail ? p.fail->op_index : SIZE_MAX));
        if (!p.saved_path.empty()) x << xml_escape("replay: " + p.replay);
        x << "</failure>\n";
      }
      x << "    </testcase>\n";
    }
    x << "  </testsuite>\n";
  }
  x << "</testsuites>\n";
  write_file(path, x.str());
}

void write_json(const std::vector<impl_report>& r, const std::string& path) {
  nlohmann::json j = {{"schema", "kvconform-gate"}, {"version", 1}, {"implementations", nlohmann::json::array()}};
  for (const auto& i : r) {
    nlohmann::json ji = {{"name", i.impl->name},
                         {"kind", to_string(i.impl->kind)},
                         {"group", to_string(i.impl->group)},
                         {"profile", i.impl->profile.describe()},
                         {"properties", nlohmann::json::array()}};
    for (const auto& p : i.properties) {
      nlohmann::json jp = {{"name", p.property},
                           {"status", to_string(p.result)},
                           {"cases", p.cases},
                           {"decodes", p.stats.decodes},
                           {"numeric_decodes", p.stats.numeric},
                           {"worst_err_over_bound", p.stats.worst_ratio},
                           {"seconds", p.seconds}};
      if (p.stats.end_to_end) jp["worst_end_to_end_over_bound"] = p.stats.worst_end_to_end;
      if (!p.message.empty()) jp["message"] = p.message;
      if (p.fail)
        jp["failure"] = {{"check", p.fail->check}, {"op_index", p.fail->op_index}, {"signature", p.fail->signature()}};
      if (!p.saved_path.empty()) jp["trace"] = p.saved_path, jp["replay"] = p.replay;
      ji["properties"].push_back(std::move(jp));
    }
    j["implementations"].push_back(std::move(ji));
  }
  write_file(path, j.dump(2) + "\n");
}

}  // namespace kvconform
