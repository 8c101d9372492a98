// The parts of the ring kind's row that live in separate sources of its folder.
#pragma once

#include <vector>

#include "properties/generate/property.h"

namespace kvconform::kinds {

void add_ring_properties(std::vector<property>& ps);

}  // namespace kvconform::kinds
