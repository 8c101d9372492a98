// JSON Schemas of the trace language, generated from the kind table so that they never drift from the codec.
#include "properties/trace/schema.h"

#include "properties/trace/kind_spec.h"
#include "properties/trace/op_vocabulary.h"
#include "properties/trace/refusal.h"

namespace kvconform::schema {

namespace {
const json integer = {{"type", "integer"}};
const json ref_tensor = {{"$ref", "#/$defs/tensor"}};

json field_schema(const op_field_info& f) {
  json s = f.type == field_type::integer || f.type == field_type::optional_integer ? integer
           : f.type == field_type::integers ? json{{"type", "array"}, {"items", integer}}
                                            : ref_tensor;
  s["description"] = f.meaning;
  return s;
}

/// The variants of `all` with duplicates dropped (the rows family shares its op shapes).
json distinct(const json& all) {
  json out = json::array();
  for (const json& v : all)
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}
}  // namespace

json number() { return {{"oneOf", {{{"type", "number"}}, {{"enum", {"nan", "inf", "-inf"}}}}}}; }

json tensor() {
  return {{"type", "object"},
          {"required", {"shape", "data"}},
          {"properties",
           {{"shape", {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}, {"maxItems", 4}}},
            {"data", {{"type", "array"}, {"items", {{"$ref", "#/$defs/number"}}}}}}},
          {"additionalProperties", false}};
}

json config() {
  json variants = json::array();
  for (const kind_spec* k : kind_specs()) {
    json props = {{"kind", {{"const", k->name}}}};
    json required = {"kind"};
    for (const config_field& f : k->config) {
      props[f.name] =
          f.flag ? json{{"type", "boolean"}, {"description", f.summary}}
          : f.scale
              ? json{{"type", "number"}, {"minimum", min_scale}, {"maximum", max_scale}, {"description", f.summary}}
              : json{{"type", "integer"}, {"minimum", f.min}, {"description", f.summary}};
      if (f.size && !f.optional) required.push_back(f.name);
    }
    variants.push_back(
        {{"type", "object"}, {"required", required}, {"properties", props}, {"additionalProperties", false}});
  }
  return {{"oneOf", variants}};
}

json ops(const json& extra, const std::vector<std::string>& extra_required) {
  json variants = json::array();
  for (const kind_spec* k : kind_specs())
    for (const op_spec& o : k->ops) {
      json props = extra;
      props["op"] = {{"const", to_string(o.kind)}, {"description", info_of(o.kind).meaning}};
      json required = {"op"};
      for (const std::string& r : extra_required) required.push_back(r);
      for (const op_field_info& f : op_fields) {
        if (!(o.fields & f.bit)) continue;
        props[f.name] = field_schema(f);
        if (f.type != field_type::optional_tensor && f.type != field_type::optional_integer) required.push_back(f.name);
      }
      variants.push_back(
          {{"type", "object"}, {"required", required}, {"properties", props}, {"additionalProperties", false}});
    }
  return {{"anyOf", distinct(variants)}};
}

json policies() {
  json props = json::object();
  for (const kind_spec* k : kind_specs())
    for (const policy_spec& p : k->policies) {
      json& s = props[p.name];
      if (s.empty()) s = {{"description", p.summary}, {"enum", json::array()}};
      for (const policy_choice& c : p.choices)
        if (std::find(s["enum"].begin(), s["enum"].end(), c.name) == s["enum"].end()) s["enum"].push_back(c.name);
    }
  return {{"type", "object"}, {"properties", props}, {"additionalProperties", false}};
}

json kind_names() {
  json names = json::array();
  for (const kind_spec* k : kind_specs()) names.push_back(k->name);
  return names;
}

json refusal_names() {
  return kvconform::refusal_names(refuse_capacity | refuse_shape | refuse_empty | refuse_index | refuse_pending |
                                  refuse_order);
}

json trace_file() {
  const json pinned = {{"type", "object"},
                       {"properties",
                        {{"accepted", {{"type", "boolean"}}},
                         {"size", {{"type", "integer"}, {"minimum", 0}}},
                         {"output", {{"type", "array"}, {"items", {{"$ref", "#/$defs/number"}}}}},
                         {"weights", {{"type", "array"}, {"items", {{"$ref", "#/$defs/number"}}}}},
                         {"decimals", {{"type", "integer"}, {"minimum", 0}, {"maximum", 17}}}}},
                       {"additionalProperties", false}};
  return {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
          {"$id", "kvconform-trace-v1"},
          {"title", "kvconform trace: a cache config and the ops run on it"},
          {"type", "object"},
          {"required", {"schema", "version", "config", "ops"}},
          {"properties",
           {{"schema", {{"const", "kvconform-trace"}}},
            {"version", {{"const", 1}}},
            {"implementation", {{"type", "string"}}},
            {"property", {{"type", "string"}}},
            {"note", {{"type", "string"}}},
            {"config", {{"$ref", "#/$defs/config"}}},
            {"policies", policies()},
            {"drive",
             {{"type", "object"},
              {"required", {"seed", "size"}},
              {"properties",
               {{"seed", {{"type", "integer"}, {"minimum", 0}}}, {"size", {{"type", "integer"}, {"minimum", 0}}}}},
              {"additionalProperties", false}}},
            {"ops", {{"type", "array"}, {"items", {{"$ref", "#/$defs/op"}}}}}}},
          {"additionalProperties", false},
          {"$defs",
           {{"number", number()}, {"tensor", tensor()}, {"config", config()}, {"op", ops({{"expect", pinned}}, {})}}}};
}

}  // namespace kvconform::schema
