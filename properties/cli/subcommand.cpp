// What the subcommands share: the runner's implementations by name, replay hints' quoting, the kind names.
#include "properties/cli/subcommand.h"

#include "properties/trace/kind_spec.h"

namespace kvconform::cli {

const implementation& command_line::named(const std::string& name) const {
  for (const auto& i : impls_)
    if (i.name == name) return i;
  std::string names;
  for (const auto& i : impls_) names += (names.empty() ? "" : ", ") + i.name;
  throw usage_error("unknown implementation \"" + name + "\" (known: " + names + ")" +
                    (left_out_.empty() ? "" : "; " + left_out_));
}

std::string shell_words(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) {
    const bool plain =
        !w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@") ==
                          std::string::npos;
    s += (s.empty() ? "" : " ") + (plain ? w : "'" + w + "'");  // names with quotes in them are not expected
  }
  return s;
}

std::vector<std::string> kind_name_list() {
  std::vector<std::string> names;
  for (const kind_spec* k : kind_specs()) names.emplace_back(k->name);
  return names;
}

}  // namespace kvconform::cli
