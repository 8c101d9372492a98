// Why a cache may refuse an op: the reasons the models expect and implementations report.
#pragma once

#include <string>
#include <vector>

namespace kvconform {

/// Why an op may be refused. A model returns the set of acceptable reasons, because a correct
/// cache may check, say, width before or after capacity. An implementation that reports no
/// reason (a status-returning cache without one) answers `refuse_unspecified`, which matches any.
enum refusal : unsigned {
  refuse_none = 0,
  refuse_capacity = 1,  ///< a full cache or block pool
  refuse_shape = 2,     ///< wrong rank or width, keys and values that differ in steps
  refuse_empty = 4,     ///< a decode of an empty cache
  refuse_index = 8,     ///< an unknown or released sequence, a layer or reorder index out of range
  refuse_unspecified = 16,
  refuse_pending = 32,  ///< tiered: an op on rows a pending transfer has not finished with
  refuse_order = 64,    ///< tiered: a completion out of the order the cache completes transfers in
};
/// The protocol and vectors names of the reasons in `reasons` (capacity, shape, empty, index, pending, order).
std::vector<std::string> refusal_names(unsigned reasons);
/// The reason a name stands for; refuse_none for a name that is not one.
unsigned refusal_from_name(const std::string& name);
/// "capacity or shape", or "none".
std::string describe_refusals(unsigned reasons);

}  // namespace kvconform
