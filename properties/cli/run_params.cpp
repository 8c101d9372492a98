// Strict parsing of counts, seeds and RC_PARAMS: every value in its range, or an error naming it.
#include "properties/cli/run_params.h"

#include <cstdlib>
#include <limits>
#include <vector>

#include "properties/trace/utf8.h"

namespace kvconform {

std::uint64_t parse_count(std::string_view text, const std::string& what, std::uint64_t min, std::uint64_t max) {
  const std::string range = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  const auto fail = [&] { throw params_error(what + ": \"" + valid_utf8(text, 40) + "\" is not " + range); };
  if (text.empty() || text.size() > 20) fail();
  std::uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') fail();
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) fail();
    v = v * 10 + digit;
  }
  if (v < min || v > max) fail();
  return v;
}

rc_params parse_rc_params(std::string_view text) {
  rc_params p;
  std::vector<std::string> seen;
  std::size_t at = 0;
  while (at < text.size()) {
    if (text[at] == ' ' || text[at] == '\t' || text[at] == '\n') {
      ++at;
      continue;
    }
    std::size_t end = text.find_first_of(" \t\n", at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(at, end - at);
    at = end;
    const std::size_t eq = word.find('=');
    const std::string key(word.substr(0, eq));
    const std::string_view value = eq == std::string_view::npos ? std::string_view("1") : word.substr(eq + 1);
    const std::string what = "RC_PARAMS " + valid_utf8(key, 40);
    for (const std::string& k : seen)
      if (k == key) throw params_error(what + ": given twice");
    seen.push_back(key);
    if (key == "seed")
      p.seed = parse_count(value, what, 0, std::numeric_limits<std::uint64_t>::max());
    else if (key == "max_success")
      p.max_success = static_cast<int>(parse_count(value, what, 1, max_cases));
    else if (key == "max_size")
      p.max_size = static_cast<int>(parse_count(value, what, 1, max_rc_size));
    else if (key == "noshrink")
      p.noshrink = parse_count(value, what, 0, 1) == 1;
    else
      throw params_error("RC_PARAMS: unknown key \"" + valid_utf8(key, 40) +
                         "\" (kvconform reads seed, max_success, max_size and noshrink)");
  }
  return p;
}

run_options profile_options(const std::string& profile) {
  run_options o;
  if (profile == "deep") o.cases = 1000, o.max_size = 100, o.deep = true, o.search = 100;
  if (const char* env = std::getenv("RC_PARAMS"); env && *env) {
    const rc_params rc = parse_rc_params(env);
    if (rc.seed) o.seed = *rc.seed;
    if (rc.max_success) o.cases = *rc.max_success;
    if (rc.max_size) o.max_size = *rc.max_size;
    if (rc.noshrink) o.shrink = false;
  }
  return o;
}

void announce_seed(std::uint64_t seed) { ::setenv("RC_PARAMS", ("seed=" + std::to_string(seed)).c_str(), 1); }

}  // namespace kvconform
