// The numeric profile as a JSON object: the stable form a port sends to declare its arithmetic and formats.
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

namespace {
using json = nlohmann::json;

precision precision_from(const json& j, const char* field) {
  for (precision p : {precision::f64, precision::f32, precision::bf16})
    if (j.is_string() && j.get<std::string>() == to_string(p)) return p;
  throw std::invalid_argument(std::string("profile.") + field + ": expected \"f64\", \"f32\" or \"bf16\"");
}

storage_format format_from(const json& j, const char* field) {
  std::string why = "expected a string";
  if (j.is_string())
    if (const auto f = parse_storage_format(j.get<std::string>(), &why)) return *f;
  throw std::invalid_argument(std::string("profile.") + field + ": " + why);
}

template <class T>
T number_from(const json& j, const char* field) {
  if (!j.is_number() || (std::is_integral_v<T> && !j.is_number_unsigned()))
    throw std::invalid_argument(std::string("profile.") + field + ": expected a number");
  return j.get<T>();
}

bool flag_from(const json& j, const char* field) {
  if (!j.is_boolean()) throw std::invalid_argument(std::string("profile.") + field + ": expected true or false");
  return j.get<bool>();
}
latent_path latent_path_from(const json& v, const char* k) {
  for (latent_path p : {latent_path::materialised, latent_path::absorbed})
    if (v.is_string() && v.get<std::string>() == to_string(p)) return p;
  throw std::invalid_argument(std::string("profile: ") + k + " must be \"materialised\" or \"absorbed\"");
}
}  // namespace

std::string numeric_profile::to_json() const {
  json j = {{"storage", to_string(storage)},
            {"keys", kvconform::describe(keys)},
            {"values", kvconform::describe(values)},
            {"working", to_string(working)},
            {"online_block", online_block},
            {"online_undeclared", online_undeclared},
            {"splits", splits},
            {"u_p", u_p},
            {"u_out", u_out},
            {"flush_subnormals", flush_subnormals}};
  if (sliding_keys) j["sliding_keys"] = kvconform::describe(*sliding_keys);
  if (sliding_values) j["sliding_values"] = kvconform::describe(*sliding_values);
  if (latent != latent_path::none) j["latent_path"] = to_string(latent);
  return j.dump();
}

numeric_profile profile_from_json(std::string_view text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("profile: not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument("profile: expected an object");
  numeric_profile p;
  for (const auto& [key, v] : j.items()) {
    const char* k = key.c_str();
    if (key == "storage")
      p.storage = precision_from(v, k);
    else if (key == "working")
      p.working = precision_from(v, k);
    else if (key == "keys")
      p.keys = format_from(v, k);
    else if (key == "values")
      p.values = format_from(v, k);
    else if (key == "sliding_keys")
      p.sliding_keys = format_from(v, k);
    else if (key == "sliding_values")
      p.sliding_values = format_from(v, k);
    else if (key == "latent_path")
      p.latent = latent_path_from(v, k);
    else if (key == "online_block")
      p.online_block = number_from<std::size_t>(v, k);
    else if (key == "splits")
      p.splits = number_from<std::size_t>(v, k);
    else if (key == "u_p")
      p.u_p = number_from<double>(v, k);
    else if (key == "u_out")
      p.u_out = number_from<double>(v, k);
    else if (key == "online_undeclared")
      p.online_undeclared = flag_from(v, k);
    else if (key == "flush_subnormals")
      p.flush_subnormals = flag_from(v, k);
    else
      throw std::invalid_argument("profile: unknown field \"" + key + "\"");
  }
  if (const std::string why = check(p); !why.empty()) throw std::invalid_argument("profile." + why);
  return p;
}

}  // namespace kvconform
