// acme's fixed-capacity KV cache (kvconform kind flat): std::vector storage and status returns instead of exceptions.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "acme_support.h"

namespace acme {

/// A row-major view of the filled rows, in the shape kvconform's matrix_view asks for.
struct row_view {
  const double* data;
  std::ptrdiff_t n, width;
  std::ptrdiff_t rows() const { return n; }
  std::ptrdiff_t cols() const { return width; }
  double operator()(std::ptrdiff_t i, std::ptrdiff_t j) const { return data[i * width + j]; }
};

class tiny_cache {
 public:
  tiny_cache(std::size_t max_len, std::size_t d_k, std::size_t d_v) : max_(max_len), dk_(d_k), dv_(d_v) {}

  /// k and v: 1-D (one step) or 2-D (n steps) each. Checked in full before anything is stored,
  /// so a refused append leaves the cache as it was.
  status append(kvconform::array_view k, kvconform::array_view v) {
    const auto n = append_steps(k, v, dk_, dv_);
    if (!n) return status(code::bad_shape);
    if (size() + *n > max_) return status(code::full);
    keys_.insert(keys_.end(), k.data, k.data + *n * dk_);
    values_.insert(values_.end(), v.data, v.data + *n * dv_);
    return {};
  }

  std::size_t size() const { return keys_.size() / dk_; }
  std::size_t max_len() const { return max_; }
  row_view keys() const {
    return {keys_.data(), static_cast<std::ptrdiff_t>(size()), static_cast<std::ptrdiff_t>(dk_)};
  }
  row_view values() const {
    return {values_.data(), static_cast<std::ptrdiff_t>(size()), static_cast<std::ptrdiff_t>(dv_)};
  }

  std::size_t d_k() const { return dk_; }
  std::size_t d_v() const { return dv_; }

 private:
  std::size_t max_, dk_, dv_;
  std::vector<double> keys_, values_;
};

/// Found by ADL. An empty optional is a refusal without a reason, which kvconform accepts for
/// any expected one: acme's older API had no codes here.
inline std::optional<decoded> decode_step(kvconform::array_view q, const tiny_cache& c) {
  if (q.rank != 1 || q.dims[0] != c.d_k() || c.size() == 0) return std::nullopt;
  const row_view k = c.keys(), v = c.values();
  return attend(
      c.size(), c.d_k(), c.d_v(), q.data, [&](std::size_t i) { return k.data + i * c.d_k(); },
      [&](std::size_t i) { return v.data + i * c.d_v(); });
}

}  // namespace acme
