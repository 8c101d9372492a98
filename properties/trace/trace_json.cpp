// Trace <-> JSON through nlohmann::json, with the non-finite and size rules of the format.
#include "properties/trace/trace_json.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "properties/trace/file_io.h"
#include "properties/trace/json_codec.h"
#include "properties/trace/kind_spec.h"
#include "properties/trace/op_vocabulary.h"
#include "properties/trace/utf8.h"

namespace kvconform::codec {

namespace {
constexpr const char* schema_name = "kvconform-trace";
static_assert(kind_spec{}.max_cells == max_config_cells, "a kind's default cell limit is the codec's");
constexpr std::size_t max_dim = 1 << 20;

}  // namespace

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw trace_format_error(where + ": " + what);
}

json number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;  // nlohmann writes the shortest decimal that round-trips, and keeps -0.0
}

double number_from(const json& j, const std::string& where) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  bad(where, "expected a number or \"nan\", \"inf\", \"-inf\"");
}

std::size_t count_from(const json& j, const std::string& where, std::size_t max) {
  // Both name the allowed range (docs/reliability.md §2); the value is echoed only when it is an integer, so a
  // 1e308 never prints as 309 digits.
  const std::string range = "[0, " + std::to_string(max) + "]";
  if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<std::int64_t>() >= 0))
    bad(where, "expected an integer in " + range);
  const auto v = j.get<std::uint64_t>();
  if (v > max) bad(where, std::to_string(v) + " is outside the allowed range " + range);
  return static_cast<std::size_t>(v);
}

const json& field(const json& obj, const char* key, const std::string& where) {
  if (!obj.is_object()) bad(where, "expected an object");
  const auto it = obj.find(key);
  if (it == obj.end()) bad(where, std::string("missing field \"") + key + "\"");
  return *it;
}

std::vector<double> numbers_from(const json& j, const std::string& where) {
  if (!j.is_array()) bad(where, "expected an array of numbers");
  std::vector<double> out;
  out.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(number_from(j[i], where + "[" + std::to_string(i) + "]"));
  return out;
}

json numbers(const std::vector<double>& v) {
  json a = json::array();
  for (double x : v) a.push_back(number(x));
  return a;
}

json policies_json(const policy_set& p) {
  json j = json::object();
  for (const auto& [name, choice] : p.declared()) j[valid_utf8(name)] = valid_utf8(choice);
  return j;
}

policy_set policies_from(const json& j, cache_kind kind, const std::string& where) {
  if (!j.is_object()) bad(where, "expected an object of policy choices, e.g. {\"hit_limit\": \"all_but_last\"}");
  policy_set p;
  for (const auto& item : j.items()) {
    if (!item.value().is_string()) bad(where + "." + item.key(), "expected the name of a choice");
    p.declare(item.key(), item.value().get<std::string>());
  }
  if (const std::string why = policy_problem(spec_of(kind), p); !why.empty()) bad(where, why);
  return normalised(spec_of(kind), std::move(p));
}

json tensor_json(const tensor& t) { return {{"shape", t.shape}, {"data", numbers(t.data)}}; }

tensor tensor_from(const json& j, const std::string& where) {
  tensor t;
  const json& shape = field(j, "shape", where);
  if (!shape.is_array() || shape.size() > 4) bad(where + ".shape", "expected an array of at most 4 sizes");
  for (std::size_t i = 0; i < shape.size(); ++i)
    t.shape.push_back(count_from(shape[i], where + ".shape[" + std::to_string(i) + "]"));
  t.data = numbers_from(field(j, "data", where), where + ".data");
  if (!t.consistent())
    bad(where, "data has " + std::to_string(t.data.size()) + " values, which does not match the shape");
  return t;
}

json pinned_json(const pinned& p) {
  json j = json::object();
  if (p.accepted) j["accepted"] = *p.accepted;
  if (p.size) j["size"] = *p.size;
  if (!p.output.empty()) j["output"] = numbers(p.output);
  if (!p.weights.empty()) j["weights"] = numbers(p.weights);
  if (!p.output.empty() || !p.weights.empty()) j["decimals"] = p.decimals;
  return j;
}

pinned pinned_from(const json& j, const std::string& where) {
  if (!j.is_object()) bad(where, "expected an object");
  pinned p;
  if (j.contains("accepted")) {
    if (!j["accepted"].is_boolean()) bad(where + ".accepted", "expected true or false");
    p.accepted = j["accepted"].get<bool>();
  }
  if (j.contains("size")) p.size = count_from(j["size"], where + ".size", max_config_cells);
  if (j.contains("output")) p.output = numbers_from(j["output"], where + ".output");
  if (j.contains("weights")) p.weights = numbers_from(j["weights"], where + ".weights");
  if (j.contains("decimals")) p.decimals = static_cast<int>(count_from(j["decimals"], where + ".decimals", 17));
  return p;
}

cache_config config_from(const json& j) {
  const std::string where = "config";
  cache_config c;
  const json& kind = field(j, "kind", where);
  const auto k = kind.is_string() ? kind_from_string(kind.get<std::string>()) : std::nullopt;
  if (!k) bad(where + ".kind", "unknown cache kind " + kind.dump() + " (known: " + kind_names() + ")");
  c.kind = *k;
  const kind_spec& spec = spec_of(c.kind);
  for (const config_field& f : spec.config) {
    const std::string at = where + "." + f.name;
    if (f.flag) {
      if (!j.contains(f.name)) continue;
      if (!j[f.name].is_boolean()) bad(at, "expected true or false");
      c.*f.flag = j[f.name].get<bool>();
    } else if (f.optional && !j.contains(f.name)) {
      c.*f.size = 0;
    } else if (f.scale) {
      if (!j.contains(f.name)) continue;
      const double x = j[f.name].is_number() ? j[f.name].get<double>() : 0.0;
      if (!(x >= min_scale && x <= max_scale)) bad(at, "expected a number within [2^-40, 2^40]");
      c.*f.scale = x;
    } else {
      c.*f.size = count_from(field(j, f.name, where), at);
      if (c.*f.size < f.min) bad(at, "must be at least " + std::to_string(f.min));
    }
  }
  if (spec.check)
    if (const std::string why = spec.check(c); !why.empty()) bad(where, why);
  // In double: a hostile file's product of sizes may not fit 64 bits.
  if (spec.cells(c) > spec.max_cells)
    bad(where, "the cache would exceed " + std::to_string(static_cast<std::size_t>(spec.max_cells)) + " cells");
  return c;
}

json config_json(const cache_config& c) {
  json j = {{"kind", to_string(c.kind)}};
  for (const config_field& f : spec_of(c.kind).config) {
    if (f.flag)
      j[f.name] = c.*f.flag;
    else if (f.scale && c.*f.scale != 1)  // the default stays out: a trace of an unscaled cache reads as before
      j[f.name] = c.*f.scale;
    else if (f.size && (!f.optional || c.*f.size != 0))
      j[f.name] = c.*f.size;
  }
  return j;
}

std::int64_t integer_from(const json& j, const std::string& where) {
  if (!j.is_number_integer()) bad(where, "expected an integer");
  return j.get<std::int64_t>();
}

std::vector<std::int64_t> integers_from(const json& j, const std::string& where) {
  if (!j.is_array() || j.size() > max_dim)
    bad(where, "expected an array of at most " + std::to_string(max_dim) + " integers");
  std::vector<std::int64_t> out;
  for (std::size_t n = 0; n < j.size(); ++n) out.push_back(integer_from(j[n], where + "[" + std::to_string(n) + "]"));
  return out;
}

namespace {
/// The fields `o` carries in a cache of `kind`; throws when the kind has no such op.
unsigned fields_of(op_kind o, cache_kind kind, const std::string& where) {
  const kind_spec& spec = spec_of(kind);
  if (const op_spec* found = spec.find(o)) return found->fields;
  std::string names;
  for (const op_spec& x : spec.ops) names += (names.empty() ? "" : ", ") + std::string(to_string(x.kind));
  bad(where + ".op",
      std::string("a ") + spec.name + " cache has no op \"" + to_string(o) + "\" (its ops: " + names + ")");
}

/// One op field as JSON; an absent optional tensor stays out.
void put(json& j, const op_field_info& f, const tensor& t) {
  if (f.type != field_type::optional_tensor || !t.shape.empty()) j[f.name] = tensor_json(t);
}
void put(json& j, const op_field_info& f, std::int64_t x) {
  if (f.type != field_type::optional_integer || x != 0) j[f.name] = x;
}
void put(json& j, const op_field_info& f, const std::vector<std::int64_t>& xs) { j[f.name] = xs; }

/// One op field from JSON; an absent optional tensor stays empty.
void take(const json& j, const op_field_info& f, const std::string& where, tensor& t) {
  if (f.type != field_type::optional_tensor || j.contains(f.name))
    t = tensor_from(field(j, f.name, where), where + "." + f.name);
}
void take(const json& j, const op_field_info& f, const std::string& where, std::int64_t& x) {
  if (f.type != field_type::optional_integer || j.contains(f.name))
    x = integer_from(field(j, f.name, where), where + "." + f.name);
}
void take(const json& j, const op_field_info& f, const std::string& where, std::vector<std::int64_t>& xs) {
  xs = integers_from(field(j, f.name, where), where + "." + f.name);
}
}  // namespace

json op_json(const op& o, cache_kind kind) {
  json jo = {{"op", to_string(o.kind)}};
  visit_fields(o, fields_of(o.kind, kind, "op"), [&](const op_field_info& f, const auto& x) { put(jo, f, x); });
  if (o.expect) jo["expect"] = pinned_json(*o.expect);
  return jo;
}

op op_from(const json& j, cache_kind kind, const std::string& where) {
  const json& name = field(j, "op", where);
  const auto which = name.is_string() ? op_kind_from_string(name.get<std::string>()) : std::nullopt;
  if (!which) bad(where + ".op", "unknown op " + name.dump());
  op o;
  o.kind = *which;
  visit_fields(o, fields_of(o.kind, kind, where), [&](const op_field_info& f, auto& x) { take(j, f, where, x); });
  if (j.contains("expect")) o.expect = pinned_from(j["expect"], where + ".expect");
  return o;
}

}  // namespace kvconform::codec

namespace kvconform {

using namespace codec;

std::string to_json(const trace& t, int indent) {
  json j;
  j["schema"] = schema_name;
  j["version"] = trace::schema_version;
  if (!t.implementation.empty()) j["implementation"] = valid_utf8(t.implementation);
  if (!t.property.empty()) j["property"] = valid_utf8(t.property);
  if (!t.note.empty()) j["note"] = valid_utf8(t.note);
  j["config"] = config_json(t.config);
  if (!t.policies.empty()) j["policies"] = policies_json(t.policies);
  if (t.drive_seed) j["drive"] = {{"seed", *t.drive_seed}, {"size", t.drive_size}};
  json ops = json::array();
  for (const op& o : t.ops) ops.push_back(op_json(o, t.config.kind));
  j["ops"] = std::move(ops);
  return j.dump(indent) + "\n";
}

namespace {
trace trace_from_tree(const json& j) {
  const json& schema = field(j, "schema", "trace");
  if (schema != schema_name) bad("trace.schema", std::string("expected \"") + schema_name + "\"");
  const json& version = field(j, "version", "trace");
  if (version != trace::schema_version)
    bad("trace.version",
        "unsupported version " + version.dump() + " (this build reads " + std::to_string(trace::schema_version) + ")");
  trace t;
  for (auto [key, dst] : {std::pair{"implementation", &t.implementation}, {"property", &t.property}, {"note", &t.note}})
    if (j.contains(key)) {
      if (!j[key].is_string()) bad(std::string("trace.") + key, "expected a string");
      *dst = j[key].get<std::string>();
    }
  t.config = config_from(field(j, "config", "trace"));
  if (j.contains("policies")) t.policies = policies_from(j["policies"], t.config.kind, "trace.policies");
  if (j.contains("drive")) {
    const json& d = j["drive"];
    const json& seed = field(d, "seed", "trace.drive");
    if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<std::int64_t>() >= 0))
      bad("trace.drive.seed", "expected an integer in [0, 18446744073709551615]");
    t.drive_seed = seed.get<std::uint64_t>();
    // A driver draws its size in [1, capacity]; anything else would make it divide by zero or
    // index past the cache.
    t.drive_size = count_from(field(d, "size", "trace.drive"), "trace.drive.size");
    if (t.drive_size < 1 || t.drive_size > t.config.capacity)
      bad("trace.drive.size", std::to_string(t.drive_size) + " is outside the allowed range [1, " +
                                  std::to_string(t.config.capacity) + "] (1 to the config's capacity)");
  }
  const json& ops = field(j, "ops", "trace");
  if (!ops.is_array()) bad("ops", "expected an array");
  for (std::size_t i = 0; i < ops.size(); ++i) {
    op o = op_from(ops[i], t.config.kind, "ops[" + std::to_string(i) + "]");
    t.ops.push_back(std::move(o));
  }
  return t;
}
}  // namespace

trace trace_from_json(const std::string& text) { return trace_from_tree(parse_limited(text, "")); }

trace load_trace(const std::string& path) {
  const parsed_json j = [&] {
    try {
      return parse_limited(read_bounded(path, max_trace_bytes), "");  // the text is freed before the tree is read
    } catch (const file_error& e) {
      throw trace_format_error(e.what());
    } catch (const trace_format_error& e) {
      throw trace_format_error(path + ": " + e.what());
    }
  }();
  try {
    return trace_from_tree(j);
  } catch (const trace_format_error& e) {
    throw trace_format_error(path + ": " + e.what());
  }
}

void save_trace(const trace& t, const std::string& path) {
  const std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  if (ec) throw file_error("cannot write " + path + ": " + ec.message());
  write_atomic(path, to_json(t));
}

}  // namespace kvconform
