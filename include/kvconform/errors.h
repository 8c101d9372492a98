// The one error hierarchy of kvconform's caches: every refusal is a kvconform::error.
#pragma once

#include <stdexcept>

namespace kvconform {

/// Base of every refusal a cache reports; a refused operation changes nothing.
struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Not enough room: the cache or the block pool is full.
struct capacity_error : error {
  using error::error;
};
/// Wrong rank or width, or keys and values that differ in steps.
struct shape_error : error {
  using error::error;
};
/// Decode over an empty cache (0/0 is undefined).
struct empty_error : error {
  using error::error;
};
/// An unknown sequence, layer or an index out of range.
struct index_error : error {
  using error::error;
};
/// Rows a pending transfer has not finished with (tiered: a sequence still loading, a block not yet written).
struct pending_error : error {
  using error::error;
};
/// A transfer completed out of the order the cache completes them in (tiered, completion_order=fifo).
struct order_error : error {
  using error::error;
};

}  // namespace kvconform
