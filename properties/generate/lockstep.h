// A metamorphic rewrite stepped beside the trace it rewrites, one op at a time (docs/design.md §4.1).
#pragma once

#include <optional>

#include "properties/generate/property.h"

namespace kvconform {

/// The rewritten trace of a property with a rewrite, in its own session: after each op the original
/// session ran, the op's rewrite runs here and the two states are compared. The first difference is
/// kept (a failure of the original itself outranks it, which the caller sees first). Generated cases
/// follow their trace as it runs, so the trace runs once; check_trace follows a saved one.
class rewrite_lockstep {
 public:
  rewrite_lockstep(const property& p, const cache_config& c, const implementation& impl) : p_(p), rewritten_(c, impl) {}
  /// After `original` ran its last op without failing.
  void follow(session& original);
  /// The first op whose rewrite failed or left another state, if any.
  const std::optional<failure>& difference() const { return difference_; }

 private:
  const property& p_;
  session rewritten_;
  std::optional<failure> difference_;
};

}  // namespace kvconform
