// The ring reference's policy choice (docs/kinds/ring.md "Policies"), and what it declares.
#pragma once

#include "impls/common/declaring.h"
#include "impls/ring/ring.h"

namespace kvconform {

struct ring_before_full_rules : ring_rules {
  static constexpr bool rollback_before_full = true;
};

namespace policies {
inline constexpr policy before_full[] = {{"rollback", "before_full"}};
}  // namespace policies

}  // namespace kvconform
