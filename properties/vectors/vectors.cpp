// Vectors: each test's expected observations come from the model, the float128 oracle and the bound.
#include "properties/vectors/vectors.h"

#include <algorithm>
#include <boost/multiprecision/float128.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>

#include "oracle/numeric/attention_oracle.h"
#include "oracle/numeric/bound.h"
#include "oracle/numeric/top_k.h"
#include "properties/executor/kind_table.h"
#include "properties/generate/numbers_property.h"
#include "properties/generate/run_property.h"
#include "properties/trace/file_io.h"
#include "properties/trace/json_codec.h"

namespace kvconform {

namespace {
using codec::json;
using f128 = boost::multiprecision::float128;

/// Half an ulp of x: the published value is the oracle's rounded to double.
double half_ulp(double x) { return 0.5 * (std::nextafter(std::fabs(x), INFINITY) - std::fabs(x)); }

/// One stream of the expected state: its rows, positions, blocks, the bounds of computed keys, integer groups.
json stream_json(const stream& st, const numeric_profile& prof) {
  json js = {{"name", st.name},
             {"keys", codec::tensor_json({{st.rows(), st.d_k}, st.keys.copy()})},
             {"values", codec::tensor_json({{st.rows(), st.d_v}, st.values.copy()})}};
  if (!st.positions.empty()) js["positions"] = st.positions;
  if (!st.blocks.empty()) js["blocks"] = st.blocks;
  if (!st.key_bounds.empty()) {  // keys computed, not stored: each within its bound of the published value
    std::vector<double> bound = st.key_bounds;
    for (std::size_t i = 0; i < bound.size(); ++i) bound[i] += half_ulp(st.keys[i]);
    js["key_bounds"] = codec::numbers(bound);
  }
  for (auto [name, g, on] : {std::tuple{"key_groups", &st.key_groups, prof.keys.groups},
                             std::tuple{"value_groups", &st.value_groups, prof.values.groups}})
    if (on)
      js[name] = {{"scales", codec::numbers(g->scales)},
                  {"zeros", codec::numbers(g->zeros)},
                  {"quantized", g->quantized},
                  {"starts", g->starts}};
  return js;
}

/// The expected observation after each op: outcome, state, and decode results with bounds.
/// Published bounds add half an ulp of the published value: it is the oracle rounded to double.
json observations(const trace& t, const numeric_profile& prof, bool& any_refused, bool& ambiguous) {
  auto m = make_model(t.config, prof);
  json out = json::array();
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const expectation e = m->apply(t.ops[i]);
    json o = {{"op", i}, {"outcome", e.accepted ? "accepted" : "refused"}};
    if (!e.accepted) {
      any_refused = true;
      const json reasons = refusal_names(e.reasons);
      ambiguous = ambiguous || reasons.size() > 1;
      o["reasons"] = reasons;
    }
    if (!e.preempted.empty()) o["preempted"] = e.preempted;
    json decodes = json::array();
    for (const attention_problem& p : e.problems) {
      const auto r = attention_oracle<f128>(p);
      std::vector<double> s(p.n), w(p.n), od(p.d_v);
      for (std::size_t k = 0; k < p.n; ++k) s[k] = double(r.s[k]), w[k] = double(r.w[k]);
      for (std::size_t c = 0; c < p.d_v; ++c) od[c] = double(r.o[c]);
      attention_bound b = compute_bound(p, s, double(r.m), w, od, prof);
      for (std::size_t c = 0; c < p.d_v; ++c) b.output[c] += half_ulp(od[c]);
      for (std::size_t k = 0; k < p.n; ++k) b.weights[k] += half_ulp(w[k]);
      // Integer groups: a decode attends over the cache's own quantized values, which no vector can
      // publish; the numbers here are over the quantizer's inputs and are not a verdict.
      // Sparse top-k with rows tied at the k-th within the index's rounding: more than one choice is admissible
      // (docs/numerics.md §7.4), and these numbers are the declared order's only.
      const bool judged =
          b.in_domain && !prof.keys.groups && !prof.values.groups && !(p.choice && ambiguous_at_k(*p.choice));
      ambiguous = ambiguous || !judged;
      decodes.push_back({{"output", codec::numbers(od)},
                         {"weights", codec::numbers(w)},
                         {"output_bound", codec::numbers(b.output)},
                         {"weight_bound", codec::numbers(b.weights)},
                         {"numeric", judged}});
    }
    if (!decodes.empty()) o["decode"] = decodes;
    if (!e.output_bound.empty()) {  // a recurrent append's outputs, each within its bound (docs/numerics.md §3.9)
      std::vector<double> bound = e.output_bound;
      for (std::size_t i = 0; i < bound.size(); ++i) bound[i] += half_ulp(e.output[i]);
      o["outputs"] = {{"output", codec::numbers(e.output)}, {"output_bound", codec::numbers(bound)}};
    }
    const snapshot snap = m->observe();
    json streams = json::array();
    for (const stream& st : snap.streams) streams.push_back(stream_json(st, prof));
    json counters = json::object();
    for (const auto& [name, value] : snap.counters) counters[name] = value;
    o["state"] = {{"streams", streams}, {"counters", counters}};
    if (!snap.block_refs.empty()) {  // a reference count is a bug's only symptom now and then (a lock not taken)
      json refs = json::array();
      for (const auto& [block, count] : snap.block_refs) refs.push_back({block, count});
      o["state"]["block_refs"] = refs;
    }
    out.push_back(std::move(o));
  }
  return out;
}

struct test_case {
  trace t;
  std::string comment;
  std::vector<std::string> flags;
};

/// Traces the gate's own generators make for `property_name` on `ref`: `per_class` traces for
/// each input class (or `count` traces drawing from every class when per_class is 0).
std::vector<test_case> generated_tests(const implementation& ref, const std::string& property_name, std::uint64_t seed,
                                       std::size_t per_class, std::size_t count, const std::string& flag) {
  std::vector<test_case> tests;
  const property* base = find_property(property_name, ref.kind);
  if (!base) return tests;
  run_options o;
  o.seed = seed, o.cases = 10, o.max_size = 12;  // short traces: they are read by people and ports
  o.production_shapes = false;                   // the mutants' kill traces bring them where they matter (below)
  // A refusal test must contain a refused op; the model says which ops are.
  auto has_refusal = [&](const trace& t) {
    auto m = make_model(t.config, ref.profile);
    for (const op& x : t.ops)
      if (!m->apply(x).accepted) return true;
    return false;
  };
  auto collect = [&](property p, std::size_t want, const std::string& comment, std::vector<std::string> flags) {
    std::size_t got = 0;
    o.on_trace = [&](const trace& t) {
      if (got < want && !t.ops.empty() && (flag != "Refusal" || has_refusal(t)))
        ++got, tests.push_back({t, comment, flags});
    };
    run_property(p, ref, o);
  };
  if (per_class == 0) {
    collect(*base, count, base->summary, {flag, "Property_" + base->name});
    return tests;
  }
  for (const input_class& c : all_input_classes()) {
    property p = *base;
    p.classes = std::span<const input_class>(&c, 1);
    collect(p, per_class, std::string("input class ") + to_string(c) + ": " + base->summary,
            {std::string("InputClass_") + to_string(c)});
  }
  return tests;
}

/// The shrunk trace that kills each mutant of `kind`, from the property registered to kill it: with small
/// shapes where they kill it (short traces), else with the production and long ones (docs/design.md §4.4).
std::vector<test_case> mutant_tests(cache_kind kind, const std::string& profile,
                                    const std::vector<implementation>& impls, std::uint64_t seed) {
  std::vector<test_case> tests;
  run_options small, shapes;
  small.seed = shapes.seed = seed;
  small.production_shapes = false;
  for (const implementation& impl : impls) {
    if (impl.group != impl_group::mutant || impl.kind != kind || impl.profile.to_json() != profile) continue;
    const property* p = find_property(impl.killer, kind);
    if (!p) continue;
    property_run run = run_property(*p, impl, small);
    if (!run.counterexample) run = run_property(*p, impl, shapes);
    if (!run.counterexample) continue;
    trace t = *run.counterexample;
    t.note.clear();
    tests.push_back(
        {t, "kills mutant " + impl.name + " (" + impl.note + ") under " + p->name, {"Mutant", "Property_" + p->name}});
  }
  return tests;
}

json group_json(const std::string& kind, const cache_config& c, const numeric_profile& prof) {
  return {{"type", "KvCacheTrace"},
          {"kind", kind},
          {"config", codec::config_json(c)},
          {"profile", prof.describe()},
          {"storage", json::parse(prof.to_json())},
          {"tests", json::array()}};
}
}  // namespace

namespace {
/// Every test of a kind: a trace per input class, refusals, pinned traces, and one per mutant.
std::vector<test_case> tests_of(const implementation& ref, const std::vector<implementation>& impls,
                                std::uint64_t seed) {
  // A trace per input class from the kind's numbers property.
  const property* numbers = numbers_property(ref.kind);
  std::vector<test_case> tests = generated_tests(ref, numbers ? numbers->name : "", seed, 1, 0, "");
  for (auto& t : generated_tests(ref, "refused_append_unchanged", seed, 0, 3, "Refusal")) tests.push_back(std::move(t));
  for (const property* p : properties_of(ref.kind))
    if (p->fixed) tests.push_back({p->fixed(), p->summary, {"Pinned", "Property_" + p->name}});
  for (auto& t : mutant_tests(ref.kind, ref.profile.to_json(), impls, seed)) tests.push_back(std::move(t));
  return tests;
}

/// The tests in groups of one configuration each, with the observations `ref`'s model expects.
std::map<std::string, json> grouped(std::vector<test_case>& tests, const implementation& ref, int& id) {
  std::map<std::string, json> groups;
  for (test_case& tc : tests) {
    bool refused = false, ambiguous = false;
    json expected = observations(tc.t, ref.profile, refused, ambiguous);
    json ops = json::array();
    for (const op& o : tc.t.ops) {
      json jo = codec::op_json(o, ref.kind);
      jo.erase("expect");  // what to expect is in "expected"
      ops.push_back(std::move(jo));
    }
    const std::string key = codec::config_json(tc.t.config).dump();
    if (!groups.count(key)) groups[key] = group_json(to_string(ref.kind), tc.t.config, ref.profile);
    const char* result = ambiguous ? "acceptable" : refused ? "invalid" : "valid";
    groups[key]["tests"].push_back({{"tcId", ++id},
                                    {"comment", tc.comment},
                                    {"flags", tc.flags},
                                    {"ops", ops},
                                    {"expected", expected},
                                    {"result", result}});
  }
  return groups;
}

json vectors_file(const implementation& ref, bool first, int tests) {
  return {
      {"algorithm", std::string("kvconform-") + (first ? std::string(to_string(ref.kind)) : ref.name)},
      {"schema", vectors_schema_name},
      {"generatorVersion", "1"},
      {"numberOfTests", tests},
      {"header",
       {"Traces of one cache kind with the observation expected after every op.",
        "result: valid = every op is accepted; invalid = the trace has ops that must be refused (and change nothing); "
        "acceptable = several refusal reasons are allowed, or a decode lies outside the numeric domain (numbers there "
        "are not judged).",
        "A decode passes when |got - output| <= output_bound per component and |got - weight| <= weight_bound per key; "
        "bounds are the derived bound of docs/numerics.md section 3 (F = 2) plus half an ulp of the published value.",
        "A recurrent append's outputs pass when |got - output| <= output_bound, and a stream with key_bounds (a "
        "recurrent state) when each key is within its bound of the published one (docs/numerics.md section 3.9); "
        "other rows compare bit for bit."}},
      {"notes",
       {{"InputClass",
         "scores forced into a regime (overflow, underflow, ties, cancellation) that reveals a class of bugs"},
        {"Refusal", "invalid shapes, full caches and empty decodes must be refused with nothing changed"},
        {"Pinned", "values the kind's contract states exactly (docs/design.md §2)"},
        {"Mutant", "the minimal trace on which a deliberately broken cache of the zoo diverges"}}},
      {"testGroups", json::array()}};
}
}  // namespace

std::vector<std::string> write_vectors(const std::string& dir, const std::vector<cache_kind>& kinds,
                                       const std::vector<implementation>& impls, std::uint64_t seed) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> written;
  // One file per reference: kvconform_KIND_test.json for a kind's first (f64) reference, and
  // kvconform_NAME_test.json for each reference in another storage format (docs/numerics.md §6).
  std::vector<const implementation*> refs;
  for (cache_kind kind : kinds)
    for (const implementation& i : impls)
      if (i.kind == kind && i.group == impl_group::reference) refs.push_back(&i);
  for (const implementation* ref : refs) {
    const cache_kind kind = ref->kind;
    const bool first = ref == *std::find_if(refs.begin(), refs.end(), [&](auto* r) { return r->kind == kind; });
    std::vector<test_case> tests = tests_of(*ref, impls, seed);
    int id = 0;
    auto groups = grouped(tests, *ref, id);
    json file = vectors_file(*ref, first, id);
    for (auto& [key, g] : groups) file["testGroups"].push_back(std::move(g));
    const std::string path = (std::filesystem::path(dir) /
                              ("kvconform_" + (first ? std::string(to_string(kind)) : ref->name) + "_test.json"))
                                 .string();
    write_whole(path, file.dump(1) + "\n");
    written.push_back(path);
  }
  const std::string schema_path = (std::filesystem::path(dir) / vectors_schema_name).string();
  write_whole(schema_path, vectors_schema().dump(2) + "\n");
  written.push_back(schema_path);
  return written;
}

}  // namespace kvconform
