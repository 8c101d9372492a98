// Vectors: each test's expected observations come from the model, the float128 oracle and the bound.
#include "properties/vectors.h"

#include <boost/multiprecision/float128.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "oracle/attention_oracle.h"
#include "oracle/bound.h"
#include "oracle/model.h"
#include "properties/generators.h"
#include "properties/json_codec.h"
#include "properties/property.h"
#include "properties/vectors_schema.h"

namespace kvconform {

namespace {
using codec::json;
using f128 = boost::multiprecision::float128;

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
      json reasons = json::array();
      for (const char* r : {"capacity", "shape", "empty", "index"})
        if (describe_refusals(e.reasons).find(r) != std::string::npos) reasons.push_back(r);
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
      auto half_ulp = [](double x) { return 0.5 * (std::nextafter(std::fabs(x), INFINITY) - std::fabs(x)); };
      for (std::size_t c = 0; c < p.d_v; ++c) b.output[c] += half_ulp(od[c]);
      for (std::size_t k = 0; k < p.n; ++k) b.weights[k] += half_ulp(w[k]);
      ambiguous = ambiguous || !b.in_domain;
      decodes.push_back({{"output", codec::numbers(od)}, {"weights", codec::numbers(w)}, {"output_bound", codec::numbers(b.output)},
                         {"weight_bound", codec::numbers(b.weights)}, {"numeric", b.in_domain}});
    }
    if (!decodes.empty()) o["decode"] = decodes;
    const snapshot snap = m->observe();
    json streams = json::array();
    for (const stream& st : snap.streams) {
      json js = {{"name", st.name}, {"keys", codec::tensor_json({{st.rows(), st.d_k}, st.keys})}, {"values", codec::tensor_json({{st.rows(), st.d_v}, st.values})}};
      if (!st.positions.empty()) js["positions"] = st.positions;
      if (!st.blocks.empty()) js["blocks"] = st.blocks;
      streams.push_back(std::move(js));
    }
    json counters = json::object();
    for (const auto& [name, value] : snap.counters) counters[name] = value;
    o["state"] = {{"streams", streams}, {"counters", counters}};
    out.push_back(std::move(o));
  }
  return out;
}

struct test_case {
  trace t;
  std::string comment;
  std::vector<std::string> flags;
};

/// One trace per input class: rows appended in a few calls, then decodes.
std::vector<test_case> class_tests(cache_kind kind, std::uint64_t seed) {
  std::vector<test_case> tests;
  for (input_class c : all_input_classes()) {
    trace t;
    t.config = {.kind = kind, .capacity = 6, .d_k = 4, .d_v = 3};
    const row_source src(c, t.config.d_k, t.config.d_v, seed + static_cast<std::uint64_t>(c));
    std::int64_t total = 0;
    for (std::size_t n : {std::size_t{2}, std::size_t{1}, std::size_t{3}}) {
      op a;
      src.rows(total, n, seed ^ static_cast<std::uint64_t>(total), a.k.data, a.v.data);
      a.k.shape = {n, t.config.d_k}, a.v.shape = {n, t.config.d_v};
      t.ops.push_back(std::move(a));
      total += static_cast<std::int64_t>(n);
      t.ops.push_back(op{.kind = op_kind::decode, .q = tensor::vector(src.query())});
    }
    tests.push_back({t, std::string("input class ") + to_string(c) + ": decodes after 2, 3 and 6 steps", {std::string("InputClass_") + to_string(c)}});
  }
  return tests;
}

/// The shrunk trace that kills each mutant of `kind`, from the property registered to kill it.
std::vector<test_case> mutant_tests(cache_kind kind, const std::vector<implementation>& impls, std::uint64_t seed) {
  std::vector<test_case> tests;
  run_options o;
  o.seed = seed;
  for (const implementation& impl : impls) {
    if (impl.group != "mutant" || impl.kind != kind) continue;
    const property* p = find_property(impl.killer);
    if (!p) continue;
    const property_run run = run_property(*p, impl, o);
    if (!run.counterexample) continue;
    trace t = *run.counterexample;
    t.note.clear();
    tests.push_back({t, "kills mutant " + impl.name + " (" + impl.note + ") under " + p->name, {"Mutant", "Property_" + p->name}});
  }
  return tests;
}

/// Refusals every kind shares: wrong widths, ranks and step counts.
test_case shape_test(cache_kind kind) {
  trace t;
  t.config = {.kind = kind, .capacity = 3, .d_k = 2, .d_v = 1};
  t.ops = {op{.k = tensor::matrix(1, 3, {1, 2, 3}), .v = tensor::matrix(1, 1, {1})},
           op{.k = tensor::matrix(2, 2, {1, 2, 3, 4}), .v = tensor::matrix(1, 1, {1})},
           op{.k = {{1, 1, 2}, {1, 2}}, .v = tensor::matrix(1, 1, {1})},
           op{.k = tensor::vector({1, 2}), .v = tensor::vector({5})},
           op{.kind = op_kind::decode, .q = tensor::vector({1, 2, 3})}};
  return {t, "refused appends and decodes: wrong width, step mismatch, rank 3, wrong q width", {"Refusal"}};
}

json group_json(const std::string& kind, const cache_config& c, const numeric_profile& prof) {
  return {{"type", "KvCacheTrace"}, {"kind", kind}, {"config", codec::config_json(c)}, {"profile", prof.describe()}, {"tests", json::array()}};
}
}  // namespace

std::vector<std::string> write_vectors(const std::string& dir, const std::vector<cache_kind>& kinds,
                                       const std::vector<implementation>& impls, std::uint64_t seed) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> written;
  for (cache_kind kind : kinds) {
    const implementation* ref = nullptr;
    for (const implementation& i : impls)
      if (i.kind == kind && i.group == "reference") ref = &i;
    if (!ref) continue;
    std::vector<test_case> tests = class_tests(kind, seed);
    tests.push_back(shape_test(kind));
    for (const property& p : all_properties())
      if (p.fixed && p.applies_to(kind)) tests.push_back({p.fixed(), p.summary, {"Pinned", "Property_" + p.name}});
    for (auto& t : mutant_tests(kind, impls, seed)) tests.push_back(std::move(t));

    std::map<std::string, json> groups;  // one group per configuration
    int id = 0;
    for (test_case& tc : tests) {
      bool refused = false, ambiguous = false;
      json expected = observations(tc.t, ref->profile, refused, ambiguous);
      json ops = json::array();
      for (const op& o : tc.t.ops) {
        json jo = codec::op_json(o, kind);
        jo.erase("expect");  // what to expect is in "expected"
        ops.push_back(std::move(jo));
      }
      const std::string key = codec::config_json(tc.t.config).dump();
      if (!groups.count(key)) groups[key] = group_json(to_string(kind), tc.t.config, ref->profile);
      groups[key]["tests"].push_back({{"tcId", ++id}, {"comment", tc.comment}, {"flags", tc.flags}, {"ops", ops}, {"expected", expected},
                                       {"result", ambiguous ? "acceptable" : refused ? "invalid" : "valid"}});
    }
    json file = {{"algorithm", std::string("kvconform-") + to_string(kind)},
                 {"schema", vectors_schema_name},
                 {"generatorVersion", "1"},
                 {"numberOfTests", id},
                 {"header", {"Traces of one cache kind with the observation expected after every op.",
                             "result: valid = every op is accepted; invalid = the trace has ops that must be refused (and change nothing); "
                             "acceptable = several refusal reasons are allowed, or a decode lies outside the numeric domain (numbers there are not judged).",
                             "A decode passes when |got - output| <= output_bound per component and |got - weight| <= weight_bound per key; "
                             "bounds are the derived bound of DESIGN section 4 (F = 2) plus half an ulp of the published value."}},
                 {"notes", {{"InputClass", "scores forced into a regime (overflow, underflow, ties, cancellation) that reveals a class of bugs"},
                            {"Refusal", "invalid shapes, full caches and empty decodes must be refused with nothing changed"},
                            {"Pinned", "values the seed task states exactly"},
                            {"Mutant", "the minimal trace on which a deliberately broken cache of the zoo diverges"}}},
                 {"testGroups", json::array()}};
    for (auto& [key, g] : groups) file["testGroups"].push_back(std::move(g));
    const std::string path = (std::filesystem::path(dir) / (std::string("kvconform_") + to_string(kind) + "_test.json")).string();
    std::ofstream(path) << file.dump(1) << "\n";
    written.push_back(path);
  }
  const std::string schema_path = (std::filesystem::path(dir) / vectors_schema_name).string();
  std::ofstream(schema_path) << vectors_schema_text;
  written.push_back(schema_path);
  return written;
}

}  // namespace kvconform
