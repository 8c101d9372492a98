// What acme's caches share: an error-code status and result (no exceptions), a decode result and the attention step.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include <kvconform/plugin.h>

namespace acme {

/// acme reports failures as codes, never by throwing (the caches run inside a server loop).
enum class code { ok, full, bad_shape, empty, no_such };

/// Maps acme's codes to kvconform's reasons: kvconform only needs this one ADL hook.
inline kvconform::refusal refusal_for(code c) {
  switch (c) {
    case code::full: return kvconform::refuse_capacity;
    case code::bad_shape: return kvconform::refuse_shape;
    case code::empty: return kvconform::refuse_empty;
    case code::no_such: return kvconform::refuse_index;
    case code::ok: break;
  }
  return kvconform::refuse_unspecified;
}

/// absl::Status-like: ok() and a code, and no value() (that would make it a result).
class status {
 public:
  status() = default;
  explicit status(code c) : code_(c) {}
  bool ok() const { return code_ == code::ok; }
  code why() const { return code_; }
  friend kvconform::refusal kvconform_refusal(const status& s) { return refusal_for(s.code_); }

 private:
  code code_ = code::ok;
};

/// absl::StatusOr-like: ok() and value(), or the code that explains the missing value.
template <class T>
class result {
 public:
  result(T value) : value_(std::move(value)) {}  // NOLINT: implicit, as StatusOr converts from T
  result(code c) : code_(c) {}                   // NOLINT
  bool ok() const { return value_.has_value(); }
  const T& value() const { return *value_; }
  code why() const { return code_; }
  friend kvconform::refusal kvconform_refusal(const result& r) { return refusal_for(r.code_); }

 private:
  std::optional<T> value_;
  code code_ = code::ok;
};

/// A decode's numbers in acme's own type: kvconform reads .output and .weights by size() and [i].
struct decoded {
  std::vector<double> output, weights;
};

/// s_i = k_i . q * scale over the rows with live(i), softmax in two passes with the max
/// subtracted first (scores beyond +-700 would overflow exp otherwise), then sum_i w_i v_i.
/// Rows that are not live take weight exactly 0; no live row gives zeros, not 0/0. key(i) and
/// value(i) point at row i, so every acme layout (contiguous, ring, blocks, beams) shares it. The
/// scale is the caller's: a latent head's is its own width's, not the rows' (docs/kinds/latent.md).
template <class Key, class Value, class Live>
decoded attend_scaled(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, double scale, Key key,
                      Value value, Live live) {
  decoded d{std::vector<double>(d_v, 0.0), std::vector<double>(n, 0.0)};
  double m = -std::numeric_limits<double>::infinity();
  bool any = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!live(i)) continue;
    const double* k = key(i);
    double s = 0;
    for (std::size_t j = 0; j < d_k; ++j) s += k[j] * q[j];
    d.weights[i] = s * scale;
    m = std::max(m, d.weights[i]);
    any = true;
  }
  if (!any) return d;
  double l = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (live(i)) l += (d.weights[i] = std::exp(d.weights[i] - m));
  for (std::size_t i = 0; i < n; ++i) {
    if (!live(i)) continue;
    d.weights[i] /= l;
    const double* v = value(i);
    for (std::size_t c = 0; c < d_v; ++c) d.output[c] += d.weights[i] * v[c];
  }
  return d;
}

/// A decode over keys of width d_k scales by 1/sqrt(d_k) (docs/design.md §2.0).
template <class Key, class Value, class Live>
decoded attend(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, Key key, Value value, Live live) {
  return attend_scaled(n, d_k, d_v, q, 1.0 / std::sqrt(static_cast<double>(d_k)), key, value, live);
}

template <class Key, class Value>
decoded attend(std::size_t n, std::size_t d_k, std::size_t d_v, const double* q, Key key, Value value) {
  return attend(n, d_k, d_v, q, key, value, [](std::size_t) { return true; });
}

/// Steps and width of a k or v: rank 1 is one step (a decode step), rank 2 is a prompt's rows.
struct rows {
  std::size_t steps, width;
};
inline std::optional<rows> rows_in(const kvconform::array_view& a) {
  if (a.rank == 1) return rows{1, a.dims[0]};
  if (a.rank == 2) return rows{a.dims[0], a.dims[1]};
  return std::nullopt;
}

/// Whether k (d_k wide) and v (d_v wide) are a well-formed append, and of how many steps.
inline std::optional<std::size_t> append_steps(const kvconform::array_view& k, const kvconform::array_view& v,
                                               std::size_t d_k, std::size_t d_v) {
  const auto ks = rows_in(k), vs = rows_in(v);
  if (!ks || !vs || ks->width != d_k || vs->width != d_v || ks->steps != vs->steps) return std::nullopt;
  return ks->steps;
}

}  // namespace acme
