// The paged and latent references' policy choice (docs/kinds/paged.md "Policies"), and what it declares.
#pragma once

#include "impls/common/declaring.h"
#include "impls/latent/latent.h"
#include "impls/paged/paged.h"

namespace kvconform {

struct paged_kept_rules : paged_rules {
  static constexpr bool keep_rolled_back = true;
};
struct latent_kept_rules : latent_rules {
  static constexpr bool keep_rolled_back = true;
};

namespace policies {
inline constexpr policy rollback_kept[] = {{"rollback_blocks", "kept"}};
}  // namespace policies

}  // namespace kvconform
