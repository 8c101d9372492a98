// The registry of built-in implementations: references, and deliberately broken mutants.
#pragma once

#include <string>
#include <vector>

#include "properties/executor/subject.h"

namespace kvconform {

/// Every built-in implementation, references first.
const std::vector<implementation>& builtin_implementations();
/// By exact name, or nullptr.
const implementation* find_implementation(const std::string& name);

}  // namespace kvconform
