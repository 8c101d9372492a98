// The caller-facing array type: a read-only, row-major view that caches receive as k, v and q.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>

namespace kvconform {

/// A read-only row-major view of rank 0..4. Caches must copy what they keep: the caller may
/// change or free the memory as soon as the call returns.
struct array_view {
  const double* data = nullptr;
  std::array<std::size_t, 4> dims{};
  std::size_t rank = 0;

  array_view() = default;
  array_view(const double* d, std::initializer_list<std::size_t> shape) : data(d) {
    for (std::size_t s : shape) dims[rank++] = s;
  }

  /// Number of elements (the product of the dimensions; 1 for rank 0).
  std::size_t size() const {
    std::size_t n = 1;
    for (std::size_t i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
  std::size_t dim(std::size_t i) const { return dims[i]; }
};

/// Sparse top-k's indexer inputs (docs/numerics.md §7.4) with an op: the index key of each step appended, and each
/// query's index queries (heads, width) and head weights (heads), a prefill's with a leading m. Empty where the op
/// has none.
struct indexer_view {
  array_view keys, queries, weights;
};

/// Rows and width of a cache input: rank 1 is one step of width dims[0], rank 2 is dims[0]
/// steps of width dims[1]. Any other rank yields `ok == false`.
struct steps_of {
  bool ok = false;
  std::size_t steps = 0, width = 0;
  explicit steps_of(const array_view& a) {
    if (a.rank == 1) ok = true, steps = 1, width = a.dims[0];
    if (a.rank == 2) ok = true, steps = a.dims[0], width = a.dims[1];
  }
};

}  // namespace kvconform
