// The one table of refusal names, shared by messages, port answers and vectors.
#include "properties/trace/refusal.h"

#include <iterator>

namespace kvconform {

namespace {
// Bit i of `refusal`; bit 4 (refuse_unspecified) has no name: it is what an answer without a reason matches.
constexpr const char* reason_names[] = {"capacity", "shape", "empty", "index", nullptr, "pending", "order"};
}  // namespace

std::vector<std::string> refusal_names(unsigned reasons) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < std::size(reason_names); ++i)
    if (reason_names[i] && (reasons & (1u << i))) names.emplace_back(reason_names[i]);
  return names;
}

unsigned refusal_from_name(const std::string& name) {
  for (unsigned i = 0; i < std::size(reason_names); ++i)
    if (reason_names[i] && name == reason_names[i]) return 1u << i;
  return refuse_none;
}

std::string describe_refusals(unsigned reasons) {
  std::string s;
  for (const std::string& n : refusal_names(reasons)) s += (s.empty() ? "" : " or ") + n;
  return s.empty() ? "none" : s;
}

}  // namespace kvconform
