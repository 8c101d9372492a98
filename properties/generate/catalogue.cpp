// The property catalogue of every kind, and the one way a trace is judged.
#include "properties/generate/property.h"

#include <algorithm>

namespace kvconform {

namespace {
std::vector<property> make_catalogue() {
  std::vector<property> ps;
  add_rows_properties(ps);
  add_beam_properties(ps);
  add_paged_properties(ps);
  return ps;
}
}  // namespace

property& add_property(std::vector<property>& ps, std::string name, std::string summary, std::span<const cache_kind> kinds) {
  property p;
  p.name = std::move(name);
  p.summary = std::move(summary);
  p.kinds.assign(kinds.begin(), kinds.end());
  return ps.emplace_back(std::move(p));
}

bool property::applies_to(cache_kind k) const { return std::find(kinds.begin(), kinds.end(), k) != kinds.end(); }

const std::vector<property>& all_properties() {
  static const std::vector<property> ps = make_catalogue();
  return ps;
}

const property* find_property(const std::string& name) {
  for (const property& p : all_properties())
    if (p.name == name) return &p;
  return nullptr;
}

verdict check_trace(const property* p, const trace& t, const implementation& impl) {
  if (p && p->drive && t.drive_seed) {  // the driver's own comparisons need the driver again
    session s(t.config, impl);
    p->drive(s, t.config, *t.drive_seed, t.drive_size);
    return {s.failed(), s.stats()};
  }
  verdict v = run_trace(t, impl);
  if (!v.ok() || !p || !p->rewrite) return v;
  session original(t.config, impl), rewritten(t.config, impl);
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    original.step(t.ops[i]);
    for (const op& o : p->rewrite(t.ops[i])) rewritten.step(o);
    if (rewritten.failed()) return {rewritten.failed(), v.stats};
    if (const std::string d = diff(original.observe(), rewritten.observe()); !d.empty()) {
      failure f{i, to_string(t.ops[i].kind), "metamorphic", "after op " + std::to_string(i) + " the rewritten trace differs: " + d};
      return {f, v.stats};
    }
  }
  return v;
}

}  // namespace kvconform
