// The built-in implementations: each kind's references (properties/kinds/KIND/references.cpp), then, compiled with
// KVCONFORM_ZOO, its zoo (zoo.cpp beside them), in kind-table order.
#include "properties/runners/builtin.h"

namespace kvconform {

const std::vector<implementation>& builtin_implementations() {
  static const std::vector<implementation> all = [] {
    std::vector<implementation> v;
    auto append = [&v](std::vector<implementation> kind) { v.insert(v.end(), kind.begin(), kind.end()); };
#ifdef KVCONFORM_ZOO
#define KVCONFORM_APPEND_BUILTINS(name) \
  append(kinds::name##_references());   \
  append(kinds::name##_zoo());
#else
#define KVCONFORM_APPEND_BUILTINS(name) append(kinds::name##_references());
#endif
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

bool zoo_built() {
#ifdef KVCONFORM_ZOO
  return true;
#else
  return false;
#endif
}

}  // namespace kvconform
