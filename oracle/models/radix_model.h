// The model of the radix kind: prefix_model under the radix tree's policies, its locks counted (docs/kinds/radix.md).
#pragma once

#include "oracle/models/prefix_model.h"

namespace kvconform {

/// A prefix_model under eviction=leaf and duplicates=adopted (SGLang's tree: one page per chain, whole leaves evicted
/// least recently used first), which are not policies here but the kind, with its phases (prefix_phases.cpp) always
/// on; counters prefix's and `protected_blocks`, the registered pages a table holds.
class radix_model : public prefix_model {
 public:
  radix_model(const cache_config& c, const numeric_profile& p, const policy_set& policies = {});

 protected:
  void count(snapshot& out) const override;
};

}  // namespace kvconform
