// The registry of built-in implementations: every kind's reference, mutants and valid variants.
#pragma once

#include <string>
#include <vector>

#include "properties/executor/subject.h"

namespace kvconform {

/// Every built-in implementation, kind by kind in table order, each kind's reference first.
const std::vector<implementation>& builtin_implementations();
/// By exact name, or nullptr.
const implementation* find_implementation(const std::string& name);

/// Registration shorthands for the built-in lists, one line each (docs/mutants.md tells each story).
template <class C>
implementation reference(const char* name, const char* note) {
  return make_implementation<C>({name, impl_group::reference, note});
}
template <class C>
implementation mutant(const char* name, const char* killer, const char* note) {
  return make_implementation<C>({name, impl_group::mutant, note, killer});
}
template <class C>
implementation variant(const char* name, const char* note) {
  return make_implementation<C>({name, impl_group::variant, note});
}

namespace kinds {
#define KVCONFORM_DECLARE_BUILTINS(name) std::vector<implementation> name##_builtins();
KVCONFORM_KINDS(KVCONFORM_DECLARE_BUILTINS)
#undef KVCONFORM_DECLARE_BUILTINS
}  // namespace kinds

}  // namespace kvconform
