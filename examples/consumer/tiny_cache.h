// acme's fixed-capacity KV cache: std::vector storage and status returns instead of exceptions.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include "impls/common/array_view.h"
#include "oracle/models/model.h"

namespace acme {

/// Why an append failed; kvconform learns the reason through kvconform_refusal below.
enum class status { ok, full, bad_shape };
inline kvconform::refusal kvconform_refusal(status s) {
  return s == status::full ? kvconform::refuse_capacity : kvconform::refuse_shape;
}

/// A row-major view of the filled rows.
struct row_view {
  const double* data;
  std::ptrdiff_t n, width;
  std::ptrdiff_t rows() const { return n; }
  std::ptrdiff_t cols() const { return width; }
  double operator()(std::ptrdiff_t i, std::ptrdiff_t j) const { return data[i * width + j]; }
};

struct append_status {
  status s;
  bool ok() const { return s == status::ok; }
  friend kvconform::refusal kvconform_refusal(const append_status& a) { return acme::kvconform_refusal(a.s); }
};

class tiny_cache {
 public:
  tiny_cache(std::size_t max_len, std::size_t d_k, std::size_t d_v) : max_(max_len), dk_(d_k), dv_(d_v) {}

  /// k and v: 1-D (one step) or 2-D (n steps) each; they must agree in steps.
  append_status append(kvconform::array_view k, kvconform::array_view v) {
    if (k.rank < 1 || k.rank > 2 || v.rank < 1 || v.rank > 2) return {status::bad_shape};
    const std::size_t n = k.rank == 2 ? k.dims[0] : 1;
    if (k.dims[k.rank - 1] != dk_ || v.dims[v.rank - 1] != dv_ || (v.rank == 2 ? v.dims[0] : 1) != n) return {status::bad_shape};
    if (size() + n > max_) return {status::full};
    keys_.insert(keys_.end(), k.data, k.data + n * dk_);
    values_.insert(values_.end(), v.data, v.data + n * dv_);
    return {status::ok};
  }

  std::size_t size() const { return keys_.size() / dk_; }
  row_view keys() const { return {keys_.data(), static_cast<std::ptrdiff_t>(size()), static_cast<std::ptrdiff_t>(dk_)}; }
  row_view values() const { return {values_.data(), static_cast<std::ptrdiff_t>(size()), static_cast<std::ptrdiff_t>(dv_)}; }

  std::size_t d_k() const { return dk_; }
  std::size_t d_v() const { return dv_; }

 private:
  std::size_t max_, dk_, dv_;
  std::vector<double> keys_, values_;
};

struct decoded {
  std::vector<double> output, weights;
};

/// Two-pass softmax attention; an empty cache or a wrong q gives nothing (a refusal).
inline std::optional<decoded> decode_step(kvconform::array_view q, const tiny_cache& c) {
  if (q.rank != 1 || q.dims[0] != c.d_k() || c.size() == 0) return std::nullopt;
  decoded d{std::vector<double>(c.d_v(), 0.0), std::vector<double>(c.size())};
  const row_view k = c.keys(), v = c.values();
  double m = -std::numeric_limits<double>::infinity(), l = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    double s = 0;
    for (std::size_t j = 0; j < c.d_k(); ++j) s += k(i, j) * q.data[j];
    d.weights[i] = s / std::sqrt(static_cast<double>(c.d_k()));
    m = std::max(m, d.weights[i]);
  }
  for (double& w : d.weights) l += (w = std::exp(w - m));
  for (std::size_t i = 0; i < c.size(); ++i) {
    d.weights[i] /= l;
    for (std::size_t j = 0; j < c.d_v(); ++j) d.output[j] += d.weights[i] * v(i, j);
  }
  return d;
}

}  // namespace acme
