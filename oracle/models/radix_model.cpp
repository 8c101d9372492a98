// The radix specification, written independently of the caches it judges (docs/kinds/radix.md).
#include "oracle/models/radix_model.h"

namespace kvconform {

namespace {
/// The tree every radix cache is: one page per chain, whole leaves evicted (docs/kinds/radix.md).
policy_set tree_policies(policy_set p) {
  p.declare("eviction", "leaf");
  p.declare("duplicates", "adopted");
  return p;
}
}  // namespace

radix_model::radix_model(const cache_config& c, const numeric_profile& p, const policy_set& policies)
    : prefix_model(c, p, tree_policies(policies)) {}

void radix_model::count(snapshot& out) const {
  prefix_model::count(out);
  out.counters.emplace_back("protected_blocks", static_cast<std::int64_t>(protected_blocks()));
}

}  // namespace kvconform
