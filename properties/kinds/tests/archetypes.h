// Minimal parts for archetype tests: views, decode results and statuses with only what the concepts require.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <kvconform/plugin.h>

namespace kvconform::archetypes {

/// A matrix view with rows(), cols() and (i, j) only.
struct matrix {
  std::ptrdiff_t n = 0, w = 1;
  std::ptrdiff_t rows() const { return n; }
  std::ptrdiff_t cols() const { return w; }
  double operator()(std::ptrdiff_t, std::ptrdiff_t) const { return 0; }
};

/// A (B, H, length, D) view with dimension(i) and (b, h, t, j) only.
struct tensor4 {
  std::size_t dims[4] = {1, 1, 0, 1};
  std::size_t dimension(std::size_t i) const { return dims[i]; }
  double operator()(std::size_t, std::size_t, std::size_t, std::size_t) const { return 0; }
};

/// Numbers with size() and [i] only.
struct numbers {
  std::size_t n = 0;
  std::size_t size() const { return n; }
  double operator[](std::ptrdiff_t) const { return 0; }
};
struct decoded {
  numbers output, weights;
};

/// A status with ok() only, and its reason through ADL.
struct status {
  bool good = true;
  bool ok() const { return good; }
};
inline refusal kvconform_refusal(const status&) { return refuse_capacity; }

/// A StatusOr-like result: ok() and value() only.
template <class T>
struct result {
  std::optional<T> v;
  bool ok() const { return v.has_value(); }
  const T& value() const { return *v; }
};

/// What block_pool_cache requires and no more (int ids, a pool of one block): a fork refused by an
/// empty optional, a release refused by a false status. A kind's archetype adds its create and append.
struct pool {
  pool(std::size_t, std::size_t, std::size_t, std::size_t) {}
  std::optional<int> fork(int) { return std::nullopt; }
  status release(int) { return {false}; }
  matrix keys(int) const { return {}; }
  matrix values(int) const { return {}; }
  std::size_t num_blocks() const { return 1; }
  std::size_t free_blocks() const { return 1; }
  std::vector<unsigned> block_table(int) const { return {}; }
  std::size_t ref_count(std::size_t) const { return 0; }
};

/// T registered, checked to be of `kind`, over a pool of one one-row block one value wide (the smallest config a
/// pool kind takes).
template <class T>
subject_ptr one_block_pool(cache_kind kind) {
  const implementation impl = make_implementation<T>({"archetype"});
  EXPECT_EQ(impl.kind, kind);
  cache_config c{kind, 1, 1, 1};
  c.block_size = 1;
  return impl.make(c);
}

}  // namespace kvconform::archetypes
