// The executor's small runtime interface to an implementation under test (in-process or a port).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "impls/common/array_view.h"
#include "oracle/numeric/numeric_profile.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// One op as the implementation receives it: the op plus views of the executor's guarded
/// copies of its arrays (sentinels around them; poisoned after the call).
struct call {
  const op& o;
  array_view k, v, q, mask;
};

/// What an implementation did: accepted (with decode results) or refused with a reason from
/// the `refusal` set of oracle/model.h.
struct op_outcome {
  bool accepted = true;
  unsigned reason = 0;
  std::string message;
  std::vector<double> output, weights;
  std::vector<std::int64_t> preempted;  ///< paged with preemption: handles of released victims
  bool unsupported = false;  ///< the implementation lacks the op (NOT SUPPORTED, never a pass)
};

/// A failure an implementation's adapter detects itself (a port that hangs, exits or answers
/// garbage); the executor reports it under `check` instead of as an unexpected exception.
struct subject_failure : std::runtime_error {
  std::string check;
  subject_failure(std::string check_name, const std::string& what) : std::runtime_error(what), check(std::move(check_name)) {}
};

/// An implementation under test. Exceptions other than refusals escape `apply` and are
/// reported by the executor as failures.
class subject {
 public:
  virtual ~subject() = default;
  virtual op_outcome apply(const call& c) = 0;
  virtual snapshot observe() = 0;
};

/// A registered implementation: a name, its kind, its declared numeric profile and a factory.
struct implementation {
  std::string name;
  cache_kind kind = cache_kind::flat;
  std::string group;  ///< "reference", "mutant" (deliberately wrong) or "variant" (correct alternative)
  std::string note;   ///< one line: what it is, or the bug it models and where it comes from
  std::string killer; ///< mutants: the property expected to kill it
  numeric_profile profile;
  std::vector<std::string> capabilities;  ///< optional abilities, e.g. "decode"
  std::function<std::unique_ptr<subject>(const cache_config&)> make;
};

}  // namespace kvconform
