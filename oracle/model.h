// The executable specification: a model per cache kind decides every expected outcome.
#pragma once

#include <memory>
#include <vector>

#include "oracle/attention_problem.h"
#include "oracle/numeric_profile.h"
#include "properties/trace.h"

namespace kvconform {

/// Why an op may be refused. A model returns the set of acceptable reasons, because a correct
/// cache may check, say, width before or after capacity. An implementation that reports no
/// reason (a status-returning cache without one) answers `refuse_unspecified`, which matches any.
enum refusal : unsigned { refuse_none = 0, refuse_capacity = 1, refuse_shape = 2, refuse_empty = 4, refuse_index = 8, refuse_unspecified = 16 };
std::string describe_refusals(unsigned reasons);

/// What the model says an op must do. A refused op changes nothing in the model.
struct expectation {
  bool accepted = true;
  unsigned reasons = refuse_none;             ///< acceptable refusal reasons when !accepted
  std::vector<attention_problem> problems;    ///< a decode: one problem per output block
  std::vector<std::int64_t> preempted;        ///< paged: handles an accepted append must preempt
};

/// The model interface the executor drives. Each kind implements it with plain, obviously
/// correct state; its inputs are rounded to the implementation's storage format first.
class model {
 public:
  virtual ~model() = default;
  virtual expectation apply(const op& o) = 0;
  virtual snapshot observe() const = 0;
};

/// The model for a cache config and an implementation's profile (oracle/model.cpp picks the kind's).
std::unique_ptr<model> make_model(const cache_config& c, const numeric_profile& p);

}  // namespace kvconform
