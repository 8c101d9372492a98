// The property catalogue of every kind (from the kind table), and the one way a trace is judged.
#include <algorithm>

#include "properties/executor/kind_table.h"
#include "properties/generate/lockstep.h"
#include "properties/generate/numbers_property.h"
#include "properties/generate/statements.h"

namespace kvconform {

property& add_property(std::vector<property>& ps, cache_kind kind, std::string name, std::string summary,
                       case_generator generate, capability_set needs) {
  property p;
  p.name = std::move(name);
  p.summary = std::move(summary);
  p.kind = kind;
  p.generate = std::move(generate);
  p.needs = needs;
  return ps.emplace_back(std::move(p));
}

property& add_property(std::vector<property>& ps, cache_kind kind, const statement& s) {
  property& p = add_property(ps, kind, s.name, s.summary);
  p.needs = s.needs;
  p.long_traces = s.long_traces;
  p.search = s.search;
  if (s.large_scores) p.classes = large_score_classes();
  return p;
}

std::vector<op> one_d_as_one_row(const op& o) {
  op r = o;
  if (o.kind == op_kind::append && o.k.shape.size() == 1 && o.v.shape.size() == 1) {
    r.k.shape = {1, o.k.shape[0]};
    r.v.shape = {1, o.v.shape[0]};
    if (o.index_k.shape.size() == 1) r.index_k.shape = {1, o.index_k.shape[0]};  // sparse top-k's, shaped as k
  }
  return {r};
}

const std::vector<property>& all_properties() {
  static const std::vector<property> ps = [] {
    std::vector<property> all;
    for (const kind_descriptor* k : all_kinds()) k->add_properties(all);
    return all;
  }();
  return ps;
}

std::vector<const property*> properties_of(cache_kind k) {
  std::vector<const property*> mine;
  for (const property& p : all_properties())
    if (p.kind == k) mine.push_back(&p);
  return mine;
}

const property* numbers_property(cache_kind k) {
  for (const property* p : properties_of(k))
    if (p->name.ends_with("_within_bound")) return p;
  return nullptr;
}

const property* find_property(const std::string& name, cache_kind k) {
  for (const property& p : all_properties())
    if (p.kind == k && p.name == name) return &p;
  return nullptr;
}

verdict check_trace(const property* p, const trace& t, const implementation& impl) {
  if (p && p->drive && t.drive_seed) {  // the driver's own comparisons need the driver again
    session s(t.config, impl);
    p->drive(s, t.config, *t.drive_seed, t.drive_size);
    return {s.failed(), s.stats(), s.events()};
  }
  if (!p || !p->rewrite) return run_trace(t, impl);
  // The trace and its rewrite in lockstep, one pass over the trace. A failure of the trace itself
  // comes first wherever it happens, so the rewrite's first difference is kept until the trace
  // has run to its end.
  session original(t.config, impl);
  rewrite_lockstep rewritten(*p, t.config, impl);
  for (const op& o : t.ops) {
    if (!original.step(o)) break;
    rewritten.follow(original);
  }
  return {original.failed() ? original.failed() : rewritten.difference(), original.stats(), original.events()};
}

}  // namespace kvconform
