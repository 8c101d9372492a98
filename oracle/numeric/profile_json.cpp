// The numeric profile as a JSON object: the stable form a port sends to declare its arithmetic and formats.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>

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

/// "none" | "sliding W" | "chunked C", W and C positive integers.
void window_from(const json& v, attention_semantics& a) {
  const std::string text = v.is_string() ? v.get<std::string>() : "";
  if (text == "none") {
    a.window = window_kind::none, a.span = 0;
    return;
  }
  for (auto [name, kind] : {std::pair{"sliding ", window_kind::sliding}, {"chunked ", window_kind::chunked}}) {
    const std::string prefix = name;
    if (text.rfind(prefix, 0) != 0) continue;
    const std::string digits = text.substr(prefix.size());
    if (!digits.empty() && digits.size() <= 7 && digits.find_first_not_of("0123456789") == std::string::npos &&
        std::stoul(digits) > 0) {
      a.window = kind, a.span = std::stoul(digits);
      return;
    }
  }
  throw std::invalid_argument(
      "profile.attention.window: expected \"none\", \"sliding W\" or \"chunked C\" (W, C from 1 to 9999999)");
}

/// "none" | {"top_k": K, "heads": H, "width": D, "index": "e4m3 row-scaled"} (docs/numerics.md §7.4).
void sparse_from(const json& v, attention_semantics& a) {
  if (v == "none") {
    a.top_k = a.index_heads = a.index_width = 0, a.index_element = element_format::f64, a.index_row_scaled = false;
    return;
  }
  const char* accepted =
      "profile.attention.sparse: accepted: \"none\" or {\"top_k\": K, \"heads\": H, \"width\": D, "
      "\"index\": \"FORMAT[ row-scaled]\"} (FORMAT: f64, f32, fp16, bf16, e4m3, e5m2)";
  if (!v.is_object()) throw std::invalid_argument(accepted);
  for (const auto& [key, x] : v.items()) {
    if (key == "top_k" || key == "heads" || key == "width") {
      const auto n = number_from<std::size_t>(x, "attention.sparse.top_k, heads and width");
      if (n == 0 || n > 4096) throw std::invalid_argument("profile.attention.sparse." + key + ": from 1 to 4096");
      (key == "top_k" ? a.top_k : key == "heads" ? a.index_heads : a.index_width) = n;
    } else if (key == "index" && x.is_string()) {
      std::string text = x.get<std::string>();
      const std::string scaled = " row-scaled";
      a.index_row_scaled = text.size() > scaled.size() && text.ends_with(scaled);
      if (a.index_row_scaled) text.resize(text.size() - scaled.size());
      const auto e = element_format_from_string(text);
      if (!e) throw std::invalid_argument(accepted);
      a.index_element = *e;
    } else {
      throw std::invalid_argument(accepted);
    }
  }
  if (a.top_k == 0 || a.index_heads == 0 || a.index_width == 0) throw std::invalid_argument(accepted);
}

attention_semantics attention_from(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("profile.attention: expected an object");
  attention_semantics a;
  for (const auto& [key, v] : j.items()) {
    if (key == "sinks") {
      if (v == "none" || v == "learned")
        a.sinks = v == "none" ? sink_kind::none : sink_kind::learned;
      else
        throw std::invalid_argument("profile.attention.sinks: accepted: \"none\", \"learned\"");
    } else if (key == "window") {
      window_from(v, a);
    } else if (key == "softcap") {
      a.softcap = number_from<double>(v, "attention.softcap");
    } else if (key == "sparse") {
      sparse_from(v, a);
    } else {
      throw std::invalid_argument("profile.attention: unknown field \"" + key +
                                  "\"; accepted: sinks, window, softcap, sparse");
    }
  }
  return a;
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
  if (!attention.plain())
    j["attention"] = {{"sinks", attention.sinks == sink_kind::learned ? "learned" : "none"},
                      {"window", attention.window_text()},
                      {"softcap", attention.softcap},
                      {"sparse", "none"}};
  if (attention.top_k > 0)
    j["attention"]["sparse"] = {{"top_k", attention.top_k},
                                {"heads", attention.index_heads},
                                {"width", attention.index_width},
                                {"index", attention.index_text()}};
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
    else if (key == "attention")
      p.attention = attention_from(v);
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
