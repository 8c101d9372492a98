// The JSON Schema of the vectors files (docs/vectors.schema.json), from the kind table.
#include "properties/trace/schema.h"
#include "properties/vectors/vectors.h"

namespace kvconform {

namespace {
using schema::json;
const json integers = {{"type", "array"}, {"items", {{"type", "integer"}}}};

json object(json required, json props) {
  return json{{"type", "object"},
              {"required", std::move(required)},
              {"properties", std::move(props)},
              {"additionalProperties", false}};
}

/// What is expected after one op: outcome (with reasons when refused), victims, decodes with bounds, state.
json observation_schema() {
  const json numbers = {{"$ref", "#/$defs/numbers"}};
  const json decode =
      object({"output", "weights", "output_bound", "weight_bound", "numeric"}, {{"output", numbers},
                                                                                {"weights", numbers},
                                                                                {"output_bound", numbers},
                                                                                {"weight_bound", numbers},
                                                                                {"numeric", {{"type", "boolean"}}}});
  // Integer-group sides (docs/numerics.md §6.2): ideal scales and minima, quantized rows, group starts.
  const json groups =
      object({"scales", "zeros", "quantized", "starts"},
             {{"scales", numbers}, {"zeros", numbers}, {"quantized", {{"type", "integer"}}}, {"starts", integers}});
  const json stream = object({"name", "keys", "values"}, {{"name", {{"type", "string"}}},
                                                          {"keys", {{"$ref", "#/$defs/tensor"}}},
                                                          {"values", {{"$ref", "#/$defs/tensor"}}},
                                                          {"positions", integers},
                                                          {"blocks", integers},
                                                          {"key_bounds", numbers},
                                                          {"key_groups", groups},
                                                          {"value_groups", groups}});
  const json state =
      object({"streams", "counters"},
             {{"streams", {{"type", "array"}, {"items", stream}}},
              {"counters", {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}}},
              {"block_refs",
               {{"type", "array"},
                {"items", {{"type", "array"}, {"items", {{"type", "integer"}}}, {"minItems", 2}, {"maxItems", 2}}}}}});
  json observation =
      object({"op", "outcome", "state"},
             {{"op", {{"type", "integer"}, {"minimum", 0}}},
              {"outcome", {{"enum", {"accepted", "refused"}}}},
              {"reasons", {{"type", "array"}, {"minItems", 1}, {"items", {{"enum", schema::refusal_names()}}}}},
              {"preempted", integers},
              {"decode", {{"type", "array"}, {"items", decode}}},
              {"outputs", object({"output", "output_bound"}, {{"output", numbers}, {"output_bound", numbers}})},
              {"state", state}});
  observation["if"] = {{"properties", {{"outcome", {{"const", "refused"}}}}}};
  observation["then"] = {{"required", {"reasons"}}};
  return observation;
}
}  // namespace

nlohmann::json vectors_schema() {
  const json strings = {{"type", "array"}, {"items", {{"type", "string"}}}};
  std::string kinds;
  for (const json& k : schema::kind_names()) kinds += (kinds.empty() ? "" : "|") + k.get<std::string>();
  const json test = object({"tcId", "comment", "flags", "ops", "expected", "result"},
                           {{"tcId", {{"type", "integer"}, {"minimum", 1}}},
                            {"comment", {{"type", "string"}}},
                            {"flags", strings},
                            {"ops", {{"type", "array"}, {"items", {{"$ref", "#/$defs/op"}}}}},
                            {"expected", {{"type", "array"}, {"items", {{"$ref", "#/$defs/observation"}}}}},
                            {"result", {{"enum", {"valid", "invalid", "acceptable"}}}}});
  const json group = object({"type", "kind", "config", "profile", "tests"},
                            {{"type", {{"const", "KvCacheTrace"}}},
                             {"kind", {{"enum", schema::kind_names()}}},
                             {"config", {{"$ref", "#/$defs/config"}}},
                             {"profile", {{"type", "string"}}},
                             {"storage", {{"type", "object"}}},
                             {"tests", {{"type", "array"}, {"minItems", 1}, {"items", {{"$ref", "#/$defs/test"}}}}}});
  json top = object({"algorithm", "schema", "generatorVersion", "numberOfTests", "header", "notes", "testGroups"},
                    {{"algorithm", {{"type", "string"}, {"pattern", "^kvconform-(" + kinds + ")(-.+)?$"}}},
                     {"schema", {{"const", vectors_schema_name}}},
                     {"generatorVersion", {{"type", "string"}}},
                     {"numberOfTests", {{"type", "integer"}, {"minimum", 1}}},
                     {"header", strings},
                     {"notes", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}},
                     {"testGroups", {{"type", "array"}, {"minItems", 1}, {"items", {{"$ref", "#/$defs/group"}}}}}});
  top["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  top["$id"] = vectors_schema_name;
  top["title"] = "kvconform test vectors: traces with the observations expected after every op";
  top["$defs"] = {{"number", schema::number()},
                  {"numbers", {{"type", "array"}, {"items", {{"$ref", "#/$defs/number"}}}}},
                  {"tensor", schema::tensor()},
                  {"config", schema::config()},
                  {"op", schema::ops({}, {})},
                  {"observation", observation_schema()},
                  {"test", test},
                  {"group", group}};
  return top;
}

}  // namespace kvconform
