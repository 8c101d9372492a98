// The registry of built-in implementations: every kind's references, and its mutants and valid variants when the zoo
// is built (KVCONFORM_ZOO).
#pragma once

#include <string>
#include <vector>

#include "properties/executor/subject.h"

namespace kvconform {

/// Every built-in implementation, kind by kind in table order, each kind's references first, then its zoo (if built).
const std::vector<implementation>& builtin_implementations();
/// By exact name, or nullptr.
const implementation* find_implementation(const std::string& name);
/// Whether this program holds the zoo (mutants and valid variants); the kvconform command without it says so.
bool zoo_built();

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
#define KVCONFORM_DECLARE_BUILTINS(name)           \
  std::vector<implementation> name##_references(); \
  std::vector<implementation> name##_zoo();
KVCONFORM_KINDS(KVCONFORM_DECLARE_BUILTINS)
#undef KVCONFORM_DECLARE_BUILTINS
}  // namespace kinds

}  // namespace kvconform
