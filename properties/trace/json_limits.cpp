// JSON from outside parsed only within limits of nesting and size (docs/reliability.md).
#include <algorithm>
#include <string_view>
#include <utility>

#include "properties/trace/json_codec.h"

namespace kvconform::codec {

namespace {
/// What a text costs once parsed, measured on the text alone before parsing.
struct measures {
  std::size_t deepest = 0, values = 0, tree_bytes = 0;
};

/// Estimated peak heap bytes per piece of text while it is parsed and read (nlohmann::json with libstdc++,
/// allocation overhead included, arrays at up to twice their size while they grow, measured on hostile texts by
/// tests/cli/peak_rss.sh): the text's size alone does not bound them, as 2^21 one-character keys or short
/// strings cost about 100 bytes each, and a long string six times its length (the lexer's growing buffer, the
/// copies into a trace).
constexpr std::size_t value_bytes = 40, container_bytes = 64, member_bytes = 96, string_bytes = 48;
constexpr std::size_t short_string = 15, long_string_factor = 6;

/// The deepest nesting, the number of values (separators) and the tree's estimated bytes, stopping
/// early once any is over its limit.
measures measure(std::string_view text) {
  measures m;
  std::size_t depth = 0, string_start = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"') {
        in_string = false;
        const std::size_t length = i - string_start;  // escapes counted as written: an overestimate
        m.tree_bytes += string_bytes + (length > short_string ? long_string_factor * length : 0);
      }
      continue;
    }
    if (c == '"')
      in_string = true, string_start = i + 1;
    else if (c == '[' || c == '{')
      m.deepest = std::max(m.deepest, ++depth), ++m.values, m.tree_bytes += container_bytes;
    else if (c == ']' || c == '}')
      depth -= depth > 0;
    else if (c == ',')
      ++m.values, m.tree_bytes += value_bytes;
    else if (c == ':')
      ++m.values, m.tree_bytes += member_bytes;
    if (m.deepest > max_json_depth || m.values > max_json_values || m.tree_bytes > max_json_tree_bytes) break;
  }
  return m;
}
}  // namespace

parsed_json parse_limited(std::string_view text, const std::string& where) {
  const auto fail = [&](const std::string& what) {
    throw trace_format_error(where.empty() ? what : where + ": " + what);
  };
  const measures m = measure(text);
  if (m.deepest > max_json_depth) fail("nested deeper than the limit of " + std::to_string(max_json_depth) + " levels");
  if (m.values > max_json_values) fail("more than the limit of " + std::to_string(max_json_values) + " JSON values");
  if (m.tree_bytes > max_json_tree_bytes)
    fail("its strings, members and values would take more than the limit of " +
         std::to_string(max_json_tree_bytes >> 20) + " MiB once parsed");
  try {
    return parsed_json(json::parse(text));
  } catch (const json::exception& e) {
    fail(std::string("not valid JSON: ") + e.what());
  }
  return parsed_json(json());
}

void parsed_json::release(json& j) noexcept {
  if (j.is_array()) {
    for (json& child : j) release(child);
    json::array_t().swap(j.get_ref<json::array_t&>());  // children are leaves or empty now: no stack
  } else if (j.is_object()) {
    for (auto& member : j.get_ref<json::object_t&>()) release(member.second);
    j.get_ref<json::object_t&>().clear();
  }
}

}  // namespace kvconform::codec
