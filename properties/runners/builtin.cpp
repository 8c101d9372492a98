// The built-in implementations: each kind's own list (properties/kinds/KIND/builtins.cpp), in kind-table order.
#include "properties/runners/builtin.h"

namespace kvconform {

const std::vector<implementation>& builtin_implementations() {
  static const std::vector<implementation> all = [] {
    std::vector<implementation> v;
    auto append = [&v](std::vector<implementation> kind) { v.insert(v.end(), kind.begin(), kind.end()); };
#define KVCONFORM_APPEND_BUILTINS(name) append(kinds::name##_builtins());
    KVCONFORM_KINDS(KVCONFORM_APPEND_BUILTINS)
#undef KVCONFORM_APPEND_BUILTINS
    return v;
  }();
  return all;
}

const implementation* find_implementation(const std::string& name) {
  for (const implementation& i : builtin_implementations())
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace kvconform
