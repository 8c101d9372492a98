// The JSON Schema of the port protocol (docs/port-protocol.schema.json), from the kind table.
#include "properties/port/port.h"
#include "properties/trace/schema.h"

namespace kvconform {

namespace {
using schema::json;

const json integer = {{"type", "integer"}};
const json numbers = {{"type", "array"}, {"items", {{"$ref", "#/$defs/number"}}}};
const json integers = {{"type", "array"}, {"items", integer}};

/// The requests: every op of the trace language with the request's id and cache, and the control requests.
json request_def() {
  auto control = [](const char* op, json props, json required) {
    props["id"] = integer, props["op"] = {{"const", op}};
    required.push_back("id"), required.push_back("op");
    return json{{"type", "object"}, {"required", required}, {"properties", props}, {"additionalProperties", false}};
  };
  json requests = schema::ops({{"id", integer}, {"cache", integer}}, {"id", "cache"})["anyOf"];
  requests.push_back(
      control("open", {{"cache", integer}, {"config", {{"$ref", "#/$defs/config"}}}}, {"cache", "config"}));
  requests.push_back(control("close", {{"cache", integer}}, {"cache"}));
  requests.push_back(control("observe", {{"cache", integer}, {"digest", {{"type", "boolean"}}}}, {"cache"}));
  requests.push_back(control("hello", {{"protocol", integer}}, {"protocol"}));
  return {{"anyOf", requests}};
}

/// One stream of an observation: its rows in full, or their count and digest.
json stream_def() {
  return {{"type", "object"},
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
}

/// Every answer's fields: an op's outcome, an observation, or a hello's offer per kind.
json answer_def() {
  json errors = schema::refusal_names();
  errors.push_back("unsupported");
  json capabilities = json::array();
  for (capability c : all_capabilities) capabilities.push_back(to_string(c));
  const json offer = {
      {"type", "object"},
      {"properties",
       {{"profile", {{"type", "object"}}},
        {"capabilities", {{"type", "array"}, {"items", {{"enum", capabilities}}}}},
        {"policies", schema::policies()},
        {"limits", {{"type", "object"}, {"additionalProperties", {{"type", "integer"}, {"minimum", 0}}}}}}}};
  return {{"type", "object"},
          {"required", {"id", "ok"}},
          {"properties",
           {{"id", integer},
            {"ok", {{"type", "boolean"}}},
            {"error", {{"enum", errors}}},
            {"message", {{"type", "string"}}},
            {"output", numbers},
            {"weights", numbers},
            {"preempted", integers},
            {"streams", {{"type", "array"}, {"items", {{"$ref", "#/$defs/stream"}}}}},
            {"counters", {{"type", "object"}, {"additionalProperties", integer}}},
            {"block_refs",
             {{"type", "array"}, {"items", {{"type", "array"}, {"items", integer}, {"minItems", 2}, {"maxItems", 2}}}}},
            {"protocol", integer},
            {"name", {{"type", "string"}}},
            {"digest", {{"type", "boolean"}}},
            {"kinds", {{"type", "object"}, {"additionalProperties", offer}}}}}};
}
}  // namespace

nlohmann::json port_protocol_schema() {
  return {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
          {"$id", "kvconform-port-protocol-v2"},
          {"title", "kvconform port protocol: one request or answer per line"},
          {"oneOf", {{{"$ref", "#/$defs/request"}}, {{"$ref", "#/$defs/answer"}}}},
          {"$defs",
           {{"number", schema::number()},
            {"tensor", schema::tensor()},
            {"config", schema::config()},
            {"request", request_def()},
            {"stream", stream_def()},
            {"answer", answer_def()}}}};
}

}  // namespace kvconform
