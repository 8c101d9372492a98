// JSON pieces of the trace format, shared by the trace codec, the port protocol and the vectors.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "properties/trace/trace_json.h"

namespace kvconform::codec {

using json = nlohmann::json;

/// Limits on JSON from outside (trace files, store entries, port answers), so that a hostile text
/// cannot exhaust the stack or the memory while it is parsed (docs/reliability.md).
inline constexpr std::size_t max_json_depth = 32;
inline constexpr std::size_t max_json_values = std::size_t{1} << 21;
/// The parsed tree's estimated heap bytes (strings, object members and values, counted on the text): with the
/// text itself at most max_trace_bytes, a parse stays within 200 MB of memory.
inline constexpr std::size_t max_json_tree_bytes = std::size_t{96} << 20;
/// A parsed tree that frees itself bottom-up. nlohmann's destructor first moves all children of a
/// container onto one growing stack: for a 2^21-value array that is up to 88 MB more at the moment
/// of freeing it, the peak of a parse (docs/reliability.md §2).
class parsed_json : public json {
 public:
  explicit parsed_json(json&& j) noexcept : json(std::move(j)) {}
  parsed_json(parsed_json&&) noexcept = default;
  parsed_json& operator=(parsed_json&&) noexcept = default;
  ~parsed_json() { release(*this); }

 private:
  static void release(json& j) noexcept;  // recursion bounded by max_json_depth
};
/// Parses `text` within those limits; throws trace_format_error naming `where` and the limit.
parsed_json parse_limited(std::string_view text, const std::string& where);

/// Throws trace_format_error naming the field (`where`) and the problem.
[[noreturn]] void bad(const std::string& where, const std::string& what);
/// A double as JSON: shortest round-trip decimal, -0.0 kept, "nan" / "inf" / "-inf" strings.
json number(double x);
double number_from(const json& j, const std::string& where);
json numbers(const std::vector<double>& v);
std::vector<double> numbers_from(const json& j, const std::string& where);
std::size_t count_from(const json& j, const std::string& where, std::size_t max = std::size_t{1} << 20);
std::int64_t integer_from(const json& j, const std::string& where);
std::vector<std::int64_t> integers_from(const json& j, const std::string& where);
const json& field(const json& obj, const char* key, const std::string& where);
json tensor_json(const tensor& t);
tensor tensor_from(const json& j, const std::string& where);
json config_json(const cache_config& c);
cache_config config_from(const json& j);
/// A cache's declared policies as an object {"policy": "choice"} (docs/design.md §2.4), and back: the choices are
/// checked against the kind's policies (bad() naming the field and what is accepted) and kept normalised.
json policies_json(const policy_set& p);
policy_set policies_from(const json& j, cache_kind kind, const std::string& where);
/// An op with exactly the fields its kind uses ("op" names it).
json op_json(const op& o, cache_kind kind);
op op_from(const json& j, cache_kind kind, const std::string& where);

}  // namespace kvconform::codec
