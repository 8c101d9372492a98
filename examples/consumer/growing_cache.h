// acme's unbounded KV cache (kvconform kind growing): storage reserved in whole steps, status returns, no capacity.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "acme_support.h"
#include "tiny_cache.h"

namespace acme {

/// tiny_cache without max_len: an append is never refused for room. Storage grows a whole step of
/// rows at a time (acme's allocator hands out step-sized slabs), so reserved() is always the fewest
/// whole steps that hold every row, and nothing before the first append.
class growing_cache {
 public:
  growing_cache(std::size_t step, std::size_t d_k, std::size_t d_v) : step_(step), dk_(d_k), dv_(d_v) {}

  /// k and v: 1-D (one step) or 2-D (n steps). Only the shape can be wrong.
  status append(kvconform::array_view k, kvconform::array_view v) {
    const auto n = append_steps(k, v, dk_, dv_);
    if (!n) return status(code::bad_shape);
    if (len_ + *n > reserved_) {
      reserved_ = (len_ + *n + step_ - 1) / step_ * step_;
      keys_.resize(reserved_ * dk_);
      values_.resize(reserved_ * dv_);
    }
    std::copy(k.data, k.data + *n * dk_, keys_.begin() + static_cast<std::ptrdiff_t>(len_ * dk_));
    std::copy(v.data, v.data + *n * dv_, values_.begin() + static_cast<std::ptrdiff_t>(len_ * dv_));
    len_ += *n;
    return {};
  }

  std::size_t size() const { return len_; }
  /// Rows of storage held, filled or not: what kvconform checks against ceil(size / step) x step.
  std::size_t reserved() const { return reserved_; }
  row_view keys() const { return {keys_.data(), static_cast<std::ptrdiff_t>(len_), static_cast<std::ptrdiff_t>(dk_)}; }
  row_view values() const {
    return {values_.data(), static_cast<std::ptrdiff_t>(len_), static_cast<std::ptrdiff_t>(dv_)};
  }

  std::size_t d_k() const { return dk_; }
  std::size_t d_v() const { return dv_; }

 private:
  std::size_t step_, dk_, dv_;
  std::size_t len_ = 0, reserved_ = 0;
  std::vector<double> keys_, values_;  // reserved_ rows each; the first len_ are filled
};

/// Found by ADL, as for tiny_cache: empty for a bad query or no rows.
inline std::optional<decoded> decode_step(kvconform::array_view q, const growing_cache& c) {
  if (q.rank != 1 || q.dims[0] != c.d_k() || c.size() == 0) return std::nullopt;
  const row_view k = c.keys(), v = c.values();
  return attend(
      c.size(), c.d_k(), c.d_v(), q.data, [&](std::size_t i) { return k.data + i * c.d_k(); },
      [&](std::size_t i) { return v.data + i * c.d_v(); });
}

}  // namespace acme
