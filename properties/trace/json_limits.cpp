// JSON from outside parsed only within limits of nesting and size (docs/reliability.md).
#include <algorithm>
#include <string_view>
#include <utility>

#include "properties/trace/json_codec.h"

namespace kvconform::codec {

namespace {
/// The deepest nesting and the number of values (separators) of `text`, outside strings, stopping
/// early once either is over its limit.
std::pair<std::size_t, std::size_t> measure(std::string_view text) {
  std::size_t depth = 0, deepest = 0, values = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{')
      deepest = std::max(deepest, ++depth), ++values;
    else if (c == ']' || c == '}')
      depth -= depth > 0;
    else if (c == ',' || c == ':')
      ++values;
    if (deepest > max_json_depth || values > max_json_values) break;
  }
  return {deepest, values};
}
}  // namespace

json parse_limited(std::string_view text, const std::string& where) {
  const auto fail = [&](const std::string& what) {
    throw trace_format_error(where.empty() ? what : where + ": " + what);
  };
  const auto [depth, values] = measure(text);
  if (depth > max_json_depth) fail("nested deeper than the limit of " + std::to_string(max_json_depth) + " levels");
  if (values > max_json_values) fail("more than the limit of " + std::to_string(max_json_values) + " JSON values");
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    fail(std::string("not valid JSON: ") + e.what());
  }
  return {};
}

}  // namespace kvconform::codec
