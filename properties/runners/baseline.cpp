// Baselines: the line format, applying one to a run, and the baseline a run writes.
#include "properties/runners/baseline.h"

#include <algorithm>
#include <map>
#include <utility>

#include "properties/trace/file_io.h"
#include "properties/trace/kind_spec.h"
#include "properties/trace/utf8.h"

namespace kvconform {

namespace {
/// Names in messages are cut: a malformed file must not fill the terminal.
constexpr std::size_t quoted_bytes = 100, reason_bytes = 300;

std::string trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return "";
  return std::string(s.substr(first, s.find_last_not_of(" \t\r") - first + 1));
}

std::string in_quotes(const std::string& name) { return "\"" + valid_utf8(name, quoted_bytes) + "\""; }

/// The implementation of `known` called `name`, or nullptr.
const implementation* find_impl(const std::vector<const implementation*>& known, const std::string& name) {
  const auto it = std::find_if(known.begin(), known.end(), [&](const implementation* i) { return i->name == name; });
  return it == known.end() ? nullptr : *it;
}

/// The policies of an implementation field's brackets, "hit_limit=all_but_last duplicates=registered", for `kind`.
policy_set policies_of(const std::string& text, cache_kind kind, const std::string& where) {
  policy_set p;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    const std::string item = text.substr(at, end - at), name = item.substr(0, item.find('='));
    at = end + 1;
    if (item.empty()) continue;
    if (name.size() == item.size())
      throw baseline_error(where + ": expected policy=choice in the brackets, got " + in_quotes(item));
    p.declare(name, item.substr(name.size() + 1));
  }
  if (const std::string why = policy_problem(spec_of(kind), p); !why.empty()) throw baseline_error(where + ": " + why);
  return normalised(spec_of(kind), std::move(p));
}

/// One line's entry; throws baseline_error naming `where` ("PATH:LINE").
baseline_entry parse_line(std::string_view line, const std::string& where,
                          const std::vector<const implementation*>& known) {
  const auto first = line.find(','), second = first == line.npos ? line.npos : line.find(',', first + 1);
  if (second == line.npos)
    throw baseline_error(where + ": expected implementation,property,reason (two commas at least)");
  baseline_entry e{trimmed(line.substr(0, first)), trimmed(line.substr(first + 1, second - first - 1)),
                   trimmed(line.substr(second + 1))};
  std::string declared;
  if (const auto open = e.implementation.find('['); open != std::string::npos) {
    if (e.implementation.back() != ']')
      throw baseline_error(where + ": expected the policies as [policy=choice ...] after the implementation");
    declared = e.implementation.substr(open + 1, e.implementation.size() - open - 2);
    e.implementation = trimmed(e.implementation.substr(0, open));
  }
  if (e.implementation.empty() || e.property.empty())
    throw baseline_error(where + ": the implementation and the property must not be empty");
  const implementation* impl = find_impl(known, e.implementation);
  if (!impl)
    throw baseline_error(where + ": unknown implementation " + in_quotes(e.implementation) +
                         " (`kvconform list` names the known ones)");
  e.policies = policies_of(declared, impl->kind, where);
  if (!find_property(e.property, impl->kind))
    throw baseline_error(where + ": " + in_quotes(e.property) + " is not a property of " + in_quotes(e.implementation) +
                         " (a " + to_string(impl->kind) + " implementation)");
  return e;
}

/// Whether the run judged the cell: it passed or failed (a known failure too).
bool judged(const property_report& p) {
  return p.result == status::pass || p.result == status::fail || p.result == status::known_failure;
}

/// The first line of a failure's message, as a reason.
std::string reason_of(const property_report& p) {
  return trimmed(valid_utf8(p.message.substr(0, p.message.find('\n')), reason_bytes));
}
}  // namespace

std::vector<baseline_entry> read_baseline(const std::string& path, const std::vector<const implementation*>& known) {
  return parse_baseline(read_bounded(path, max_baseline_bytes), path, known);
}

std::vector<baseline_entry> parse_baseline(std::string_view text, const std::string& name,
                                           const std::vector<const implementation*>& known) {
  std::vector<baseline_entry> entries;
  std::map<std::pair<std::string, std::string>, std::size_t> seen;  // each cell's line
  std::size_t number = 0;
  for (std::size_t start = text.starts_with("\xEF\xBB\xBF") ? 3 : 0; start < text.size();) {  // past a BOM
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line(text.data() + start, end - start);
    start = end + 1, ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // written on Windows
    const std::string content = trimmed(line);
    if (content.empty() || content[0] == '#') continue;
    const std::string where = valid_utf8(name, 400) + ":" + std::to_string(number);
    baseline_entry e = parse_line(content, where, known);
    e.line = number;
    const auto [it, fresh] = seen.emplace(std::pair{e.implementation, e.property}, number);
    if (!fresh)
      throw baseline_error(where + ": " + in_quotes(e.implementation) + " / " + in_quotes(e.property) +
                           " is listed already on line " + std::to_string(it->second));
    entries.push_back(std::move(e));
  }
  return entries;
}

void apply_baseline(std::vector<impl_report>& r, const std::vector<baseline_entry>& entries) {
  for (impl_report& i : r)
    for (property_report& p : i.properties) {
      const auto e = std::find_if(entries.begin(), entries.end(), [&](const baseline_entry& b) {
        return b.implementation == i.impl->name && b.property == p.property;
      });
      if (e == entries.end() || (p.result != status::fail && p.result != status::pass)) continue;  // not judged
      if (e->policies != i.impl->policies) {  // listed under other policies: it says nothing of these
        p.skipped.push_back("baseline line " + std::to_string(e->line) + ": listed under the policies " +
                            (e->policies.empty() ? std::string("none") : e->policies.describe()) + ", not applied");
        continue;
      }
      p.baseline = e->reason;
      if (p.result == status::fail) p.result = status::known_failure;
    }
}

std::size_t fixed_cells(const std::vector<impl_report>& r) {
  std::size_t n = 0;
  for (const impl_report& i : r)
    n += std::count_if(i.properties.begin(), i.properties.end(), [](const property_report& p) { return p.fixed(); });
  return n;
}

std::string baseline_text(const std::vector<impl_report>& r, const std::vector<baseline_entry>& previous) {
  std::map<std::pair<std::string, std::string>, baseline_entry> lines;  // sorted, each cell once
  for (const baseline_entry& e : previous) lines[{e.implementation, e.property}] = e;
  for (const impl_report& i : r) {
    if (i.impl->name.find_first_of(",\r\n") != std::string::npos || i.impl->name.find('#') == 0)
      throw baseline_error("implementation " + in_quotes(i.impl->name) + ": a name a baseline line cannot hold");
    for (const property_report& p : i.properties) {
      if (!judged(p)) continue;  // the previous entry, if any, stands
      const std::pair cell{i.impl->name, p.property};
      if (p.result == status::pass) lines.erase(cell);
      const std::string reason = p.result == status::fail ? reason_of(p) : p.baseline.value_or(reason_of(p));
      if (p.result == status::fail || p.result == status::known_failure)
        lines[cell] = {cell.first, cell.second, reason, 0, i.impl->policies};
    }
  }
  std::vector<baseline_entry> entries;
  for (const auto& [cell, entry] : lines) entries.push_back(entry);
  return baseline_file(entries);
}

std::string baseline_file(const std::vector<baseline_entry>& entries) {
  std::string text =
      "# kvconform baseline: the failures a gate expects, one a line as implementation,property,reason\n"
      "# (`kvconform gate --baseline FILE` reads it; `--write-baseline FILE` writes it from a run).\n";
  for (const baseline_entry& e : entries) {
    std::string declared;
    for (const auto& [name, choice] : e.policies.declared())
      declared += (declared.empty() ? "" : " ") + name + "=" + choice;
    text +=
        e.implementation + (declared.empty() ? "" : " [" + declared + "]") + "," + e.property + "," + e.reason + "\n";
  }
  return text;
}

}  // namespace kvconform
