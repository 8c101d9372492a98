// The metamorphic comparison of a trace and its rewrite, op by op.
#include "properties/generate/lockstep.h"

#include <string>

namespace kvconform {

void rewrite_lockstep::follow(session& original) {
  if (difference_ || original.ops().empty()) return;
  const std::size_t i = original.ops().size() - 1;
  const op& o = original.ops().back();
  for (const op& r : p_.rewrite(o)) rewritten_.step(r);
  if (rewritten_.failed()) {
    difference_ = rewritten_.failed();
  } else if (const std::string d = diff(original.observe(), rewritten_.observe()); !d.empty()) {
    difference_ = failure{i, to_string(o.kind), "metamorphic",
                          "after op " + std::to_string(i) + " the rewritten trace differs: " + d};
  }
}

}  // namespace kvconform
