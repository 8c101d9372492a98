// The built-in implementations; each goes through the same adapter a third party's type would.
#include "impls/flat.h"
#include "impls/mutants/flat_strict_capacity.h"
#include "properties/concepts.h"
#include "properties/registry.h"

namespace kvconform {

const std::vector<implementation>& builtin_implementations() {
  static const std::vector<implementation> all = {
      make_implementation<flat>("flat", "reference", "fixed-capacity cache, double, two-pass softmax"),
      make_implementation<mutants::flat_strict_capacity>(
          "flat-strict-capacity", "mutant", "seed bug: `>=` capacity check wastes the last slot; exact_fill should kill it"),
  };
  return all;
}

const implementation* find_implementation(const std::string& name) {
  for (const implementation& i : builtin_implementations())
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace kvconform
