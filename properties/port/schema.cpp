// The JSON Schema of the port protocol (docs/port-protocol.schema.json), from the kind table.
#include "properties/trace/schema.h"
#include "properties/port/port.h"

namespace kvconform {

nlohmann::json port_protocol_schema() {
  using schema::json;
  const json id = {{"type", "integer"}}, cache = {{"type", "integer"}};
  const json numbers = {{"type", "array"}, {"items", {{"$ref", "#/$defs/number"}}}};
  const json integers = {{"type", "array"}, {"items", {{"type", "integer"}}}};
  auto control = [&](const char* op, json props, json required) {
    props["id"] = id, props["op"] = {{"const", op}};
    required.push_back("id"), required.push_back("op");
    return json{{"type", "object"}, {"required", required}, {"properties", props}, {"additionalProperties", false}};
  };
  json requests = schema::ops({{"id", id}, {"cache", cache}}, {"id", "cache"})["anyOf"];
  requests.push_back(
      control("open", {{"cache", cache}, {"config", {{"$ref", "#/$defs/config"}}}}, {"cache", "config"}));
  requests.push_back(control("close", {{"cache", cache}}, {"cache"}));
  requests.push_back(control("observe", {{"cache", cache}, {"digest", {{"type", "boolean"}}}}, {"cache"}));
  requests.push_back(control("hello", {{"protocol", {{"type", "integer"}}}}, {"protocol"}));
  const json stream = {{"type", "object"},
                       {"oneOf", {{{"required", {"keys", "values"}}}, {{"required", {"rows", "digest"}}}}},
                       {"properties",
                        {{"name", {{"type", "string"}}},
                         {"keys", {{"$ref", "#/$defs/tensor"}}},
                         {"values", {{"$ref", "#/$defs/tensor"}}},
                         {"rows", {{"type", "integer"}, {"minimum", 0}}},
                         {"digest", {{"type", "string"}, {"pattern", "^[0-9a-f]{16}$"}}},
                         {"positions", integers},
                         {"blocks", integers},
                         {"key_scales", numbers},
                         {"key_zeros", numbers},
                         {"value_scales", numbers},
                         {"value_zeros", numbers}}}};
  json errors = schema::refusal_names();
  errors.push_back("unsupported");
  const json offer = {
      {"type", "object"},
      {"properties",
       {{"profile", {{"type", "object"}}},
        {"capabilities", {{"type", "array"}, {"items", {{"enum", {"decode", "preempt", "sinks"}}}}}},
        {"limits", {{"type", "object"}, {"additionalProperties", {{"type", "integer"}, {"minimum", 0}}}}}}}};
  const json answer = {
      {"type", "object"},
      {"required", {"id", "ok"}},
      {"properties",
       {{"id", id},
        {"ok", {{"type", "boolean"}}},
        {"error", {{"enum", errors}}},
        {"message", {{"type", "string"}}},
        {"output", numbers},
        {"weights", numbers},
        {"preempted", integers},
        {"streams", {{"type", "array"}, {"items", {{"$ref", "#/$defs/stream"}}}}},
        {"counters", {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}}},
        {"block_refs",
         {{"type", "array"},
          {"items", {{"type", "array"}, {"items", {{"type", "integer"}}}, {"minItems", 2}, {"maxItems", 2}}}}},
        {"protocol", {{"type", "integer"}}},
        {"name", {{"type", "string"}}},
        {"digest", {{"type", "boolean"}}},
        {"kinds", {{"type", "object"}, {"additionalProperties", offer}}}}}};
  return {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
          {"$id", "kvconform-port-protocol-v2"},
          {"title", "kvconform port protocol: one request or answer per line"},
          {"oneOf", {{{"$ref", "#/$defs/request"}}, {{"$ref", "#/$defs/answer"}}}},
          {"$defs",
           {{"number", schema::number()},
            {"tensor", schema::tensor()},
            {"config", schema::config()},
            {"request", {{"anyOf", requests}}},
            {"stream", stream},
            {"answer", answer}}}};
}

}  // namespace kvconform
