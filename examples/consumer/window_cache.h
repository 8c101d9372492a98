// acme's sliding-window KV cache (kvconform kind ring): keeps the last W steps and throws kvconform errors.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "acme_support.h"

namespace acme {

/// The held rows in logical (oldest-first) order, read in place: the oldest row is rarely in
/// slot 0, so the view maps row i to its slot instead of copying.
struct window_view {
  const double* data;
  std::size_t window, oldest, n, width;
  std::ptrdiff_t rows() const { return static_cast<std::ptrdiff_t>(n); }
  std::ptrdiff_t cols() const { return static_cast<std::ptrdiff_t>(width); }
  const double* row(std::size_t i) const { return data + ((oldest + i) % window) * width; }
  double operator()(std::ptrdiff_t i, std::ptrdiff_t j) const { return row(static_cast<std::size_t>(i))[j]; }
};

/// W rows of keys and values used as a ring: step p lives in slot p mod W, so an append never
/// moves a held row. Never full; malformed input throws kvconform::shape_error before any write.
class window_cache {
 public:
  window_cache(std::size_t window, std::size_t d_k, std::size_t d_v)
      : window_(window), dk_(d_k), dv_(d_v), keys_(window * d_k), values_(window * d_v) {
    if (window == 0 || d_k == 0 || d_v == 0) throw kvconform::shape_error("window_cache: sizes must be positive");
  }

  void append(kvconform::array_view k, kvconform::array_view v) {
    const auto ks = rows_in(k), vs = rows_in(v);
    if (!ks || !vs) throw kvconform::shape_error("append: k and v must be 1-D or 2-D");
    if (ks->width != dk_ || vs->width != dv_) throw kvconform::shape_error("append: wrong width");
    if (ks->steps != vs->steps) throw kvconform::shape_error("append: k and v differ in steps");
    const std::size_t n = ks->steps;
    // Of a prompt longer than the window only its last W rows survive: the rest are not written.
    for (std::size_t i = n > window_ ? n - window_ : 0; i < n; ++i) {
      const std::size_t slot = (static_cast<std::size_t>(total_) + i) % window_;
      std::copy(k.data + i * dk_, k.data + (i + 1) * dk_, keys_.begin() + static_cast<std::ptrdiff_t>(slot * dk_));
      std::copy(v.data + i * dv_, v.data + (i + 1) * dv_, values_.begin() + static_cast<std::ptrdiff_t>(slot * dv_));
    }
    total_ += static_cast<std::int64_t>(n);
  }

  std::size_t size() const {
    return total_ < static_cast<std::int64_t>(window_) ? static_cast<std::size_t>(total_) : window_;
  }
  /// Steps ever appended: a model's rotary positions count from here, not from the window.
  std::int64_t total() const { return total_; }
  std::vector<std::int64_t> positions() const {
    std::vector<std::int64_t> p;
    for (std::int64_t t = total_ - static_cast<std::int64_t>(size()); t < total_; ++t) p.push_back(t);
    return p;
  }
  window_view keys() const { return view(keys_, dk_); }
  window_view values() const { return view(values_, dv_); }
  std::size_t d_k() const { return dk_; }
  std::size_t d_v() const { return dv_; }
  std::size_t window() const { return window_; }

 protected:
  /// Forgets the newest n steps: only while nothing was overwritten (fewer than W held) does that restore the rows.
  void drop_newest(std::size_t n) { total_ -= static_cast<std::int64_t>(n); }

 private:
  window_view view(const std::vector<double>& rows, std::size_t width) const {
    const std::size_t oldest = static_cast<std::size_t>(total_ - static_cast<std::int64_t>(size())) % window_;
    return {rows.data(), window_, oldest, size(), width};
  }

  std::size_t window_, dk_, dv_;
  std::vector<double> keys_, values_;  // (W, d_k) and (W, d_v), row-major
  std::int64_t total_ = 0;
};

/// Found by ADL; throws kvconform::shape_error for a bad q and kvconform::empty_error before any step.
inline decoded decode_step(kvconform::array_view q, const window_cache& c) {
  if (q.rank != 1 || q.dims[0] != c.d_k()) throw kvconform::shape_error("decode_step: q must be 1-D of width d_k");
  if (c.size() == 0) throw kvconform::empty_error("decode_step: empty window");
  const window_view k = c.keys(), v = c.values();
  return attend(
      c.size(), c.d_k(), c.d_v(), q.data, [&](std::size_t i) { return k.row(i); },
      [&](std::size_t i) { return v.row(i); });
}

}  // namespace acme
