// The reference fixed-capacity KV cache (seed task "Fixed-capacity KV cache"), double precision.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <string>

#include "impls/array_view.h"
#include "impls/attention.h"
#include "impls/errors.h"

namespace kvconform {

/// Holds up to max_len steps of keys (d_k wide) and values (d_v wide) as copies, in
/// append order. A refused append throws and leaves the cache exactly as it was.
class flat {
 public:
  using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using view = Eigen::Map<const row_matrix>;

  flat(std::size_t max_len, std::size_t d_k, std::size_t d_v)
      : k_(static_cast<Eigen::Index>(max_len), static_cast<Eigen::Index>(d_k)),
        v_(static_cast<Eigen::Index>(max_len), static_cast<Eigen::Index>(d_v)) {
    if (d_k == 0 || d_v == 0) throw shape_error("flat: d_k and d_v must be positive");
  }

  /// Appends one step (1-D k of width d_k) or n steps (2-D (n, d_k)); n = 0 is a no-op.
  /// Throws shape_error on a wrong rank or width or a step mismatch, capacity_error when
  /// len + n > max_len (an append that ends exactly at max_len is accepted).
  void append(array_view k, array_view v) {
    const steps_of ks(k), vs(v);
    if (!ks.ok || !vs.ok) throw shape_error("append: k and v must be 1-D or 2-D");
    if (ks.width != d_k() || vs.width != d_v()) throw shape_error("append: wrong width");
    if (ks.steps != vs.steps) throw shape_error("append: k and v differ in steps");
    if (len_ + ks.steps > max_len()) throw capacity_error("append: cache full");
    for (std::size_t i = 0; i < ks.steps; ++i) {
      k_.row(static_cast<Eigen::Index>(len_ + i)) =
          Eigen::Map<const Eigen::RowVectorXd>(k.data + i * d_k(), static_cast<Eigen::Index>(d_k()));
      v_.row(static_cast<Eigen::Index>(len_ + i)) =
          Eigen::Map<const Eigen::RowVectorXd>(v.data + i * d_v(), static_cast<Eigen::Index>(d_v()));
    }
    len_ += ks.steps;
  }

  std::size_t size() const { return len_; }
  std::size_t max_len() const { return static_cast<std::size_t>(k_.rows()); }
  std::size_t d_k() const { return static_cast<std::size_t>(k_.cols()); }
  std::size_t d_v() const { return static_cast<std::size_t>(v_.cols()); }

  /// Read-only views of the filled rows only, (size, d_k) and (size, d_v).
  view keys() const { return {k_.data(), static_cast<Eigen::Index>(len_), k_.cols()}; }
  view values() const { return {v_.data(), static_cast<Eigen::Index>(len_), v_.cols()}; }

 private:
  row_matrix k_, v_;
  std::size_t len_ = 0;
};

/// One decode step over every stored row. Throws empty_error on an empty cache and
/// shape_error unless q is 1-D of width d_k.
inline decode_result decode_step(array_view q, const flat& c) {
  if (q.rank != 1 || q.dims[0] != c.d_k()) throw shape_error("decode_step: q must be 1-D of width d_k");
  if (c.size() == 0) throw empty_error("decode_step: empty cache");
  const auto k = c.keys();
  const auto v = c.values();
  return attend(
      c.size(), c.d_k(), c.d_v(), q.data,
      [&](std::size_t i) { return k.data() + i * c.d_k(); },
      [&](std::size_t i) { return v.data() + i * c.d_v(); });
}

}  // namespace kvconform
