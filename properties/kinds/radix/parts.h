// The parts of the radix kind that its sources share: its phases' weights, generators and fuzz strategy.
#pragma once

#include <memory>
#include <vector>

#include "properties/generate/fuzz_ops.h"
#include "properties/generate/property.h"
#include "properties/kinds/prefix/parts.h"

namespace kvconform::kinds {

/// The phases a radix property draws when its mix names none: each op now and then, a scheduler step often.
inline constexpr phase_mix radix_phases{.lookup = 2, .admit = 3, .chunk = 3, .retract = 1, .abort = 1, .step = 3};

/// The cases of a radix property drawn from `mix` (its pool ops and its phases).
case_generator radix_cases(prefix_mix mix);
void add_radix_properties(std::vector<property>& ps);
void radix_fuzz_config(byte_io& io, cache_config& c);
std::unique_ptr<fuzz_ops> radix_fuzz_ops(byte_io& io, const cache_config& c);

}  // namespace kvconform::kinds
