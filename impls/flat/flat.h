// The reference fixed-capacity KV cache (docs/kinds/flat.md), double precision.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <limits>
#include <string>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include "impls/common/append_steps.h"
#include "impls/common/attention.h"
#include "impls/common/formats.h"
#include "impls/common/row_storage.h"

namespace kvconform {

/// The reference choices of a flat cache: stored scalar, decode arithmetic, storage formats and the causal mask of
/// a prefill. Float32 caches and the decode and prefill mutants replace one of them.
struct flat_rules {
  using scalar = double;
  using kernel = attention_kernel;
  using storage = storage_policy<>;  ///< the formats keys and values are stored in (docs/numerics.md §6)
  /// Whether query `query` of a prefill appended after `before` rows attends row `row`: the causal mask.
  static bool sees(std::size_t before, std::size_t query, std::size_t row) { return row <= before + query; }
};

/// Holds up to max_len steps of keys (d_k wide) and values (d_v wide) as copies, in append
/// order. A refused append throws and leaves the cache exactly as it was. Members are
/// protected so that a mutant can override one method and keep the rest.
template <class Rules = flat_rules>
class basic_flat {
  using storage = typename Rules::storage;
  static constexpr bool formats = storage::keys.rounds() || storage::values.rounds();
  static constexpr bool groups = storage::keys.groups || storage::values.groups;

 public:
  using scalar = typename Rules::scalar;
  using row_matrix = Eigen::Matrix<scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using view = Eigen::Map<const row_matrix>;

  /// Unwritten rows hold NaN, so any read of a row that is not filled shows in decode.
  basic_flat(std::size_t max_len, std::size_t d_k, std::size_t d_v)
      : k_(row_matrix::Constant(static_cast<Eigen::Index>(max_len), static_cast<Eigen::Index>(d_k),
                                std::numeric_limits<scalar>::quiet_NaN())),
        v_(row_matrix::Constant(static_cast<Eigen::Index>(max_len), static_cast<Eigen::Index>(d_v),
                                std::numeric_limits<scalar>::quiet_NaN())),
        ks_(storage::keys, formats ? max_len : 0, d_k, 1),
        vs_(storage::values, formats ? max_len : 0, d_v, 1) {
    if (d_k == 0 || d_v == 0) throw shape_error("flat: d_k and d_v must be positive");
  }

  /// Appends one step (1-D k of width d_k) or n steps (2-D (n, d_k)); n = 0 is a no-op.
  /// Throws shape_error on a wrong rank or width or a step mismatch, capacity_error when
  /// len + n > max_len (an append that ends exactly at max_len is accepted).
  void append(array_view k, array_view v) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v());
    if (len_ + steps > max_len()) throw capacity_error("append: cache full");
    for (std::size_t i = 0; i < steps; ++i) write_row(len_ + i, k.data + i * d_k(), v.data + i * d_v(), i + 1 == steps);
    len_ += steps;
  }

  /// Appends the m steps of k and v as append does, then attends with query row i of q (2-D (m, d_k)) over the
  /// rows before it and the chunk's first i + 1: output (m, d_v), weights (m, size before + m). Refused as append
  /// is, or for q's shape, before anything changes.
  decode_result prefill(array_view k, array_view v, array_view q) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v()), before = len_;
    check_prefill_queries(q, steps, d_k());
    append(k, v);
    const auto kv = keys();
    const auto vv = values();
    return attend_causal<typename Rules::kernel>(
        steps, len_, d_k(), d_v(), q.data, [&](std::size_t i) { return kv.data() + i * d_k(); },
        [&](std::size_t i) { return vv.data() + i * d_v(); },
        [&](std::size_t query, std::size_t row) { return Rules::sees(before, query, row); });
  }

  /// Drops the newest n steps; index_error (and no change) when fewer are held.
  void rollback(std::size_t n) {
    if (n > len_) throw index_error("rollback: fewer steps held");
    len_ -= n;
    if constexpr (formats) ks_.truncate(kst_, len_), vs_.truncate(vst_, len_);
  }

  /// The per-tensor scales of a scaled element format (docs/numerics.md §6.1).
  void set_scales(double k_scale, double v_scale) requires(storage::keys.scaled || storage::values.scaled) {
    ks_.set_scale(k_scale), vs_.set_scale(v_scale);
  }
  /// Integer groups: the scales and minima of the quantized rows, one matrix row per quantized row
  /// (per-token groups) or per group (per-channel groups); docs/numerics.md §6.2.
  Eigen::MatrixXd key_scales() const requires groups { return exposed(ks_, kst_, false); }
  Eigen::MatrixXd key_zeros() const requires groups { return exposed(ks_, kst_, true); }
  Eigen::MatrixXd value_scales() const requires groups { return exposed(vs_, vst_, false); }
  Eigen::MatrixXd value_zeros() const requires groups { return exposed(vs_, vst_, true); }
  /// The storage of each side, for a decode that reads the codes themselves.
  const side_storage<typename storage::rules>& key_storage() const { return ks_; }
  const side_storage<typename storage::rules>& value_storage() const { return vs_; }

  std::size_t size() const { return len_; }
  std::size_t max_len() const { return static_cast<std::size_t>(k_.rows()); }
  std::size_t d_k() const { return static_cast<std::size_t>(k_.cols()); }
  std::size_t d_v() const { return static_cast<std::size_t>(v_.cols()); }

  /// Read-only views of the filled rows only, (size, d_k) and (size, d_v).
  view keys() const { return {k_.data(), static_cast<Eigen::Index>(len_), k_.cols()}; }
  view values() const { return {v_.data(), static_cast<Eigen::Index>(len_), v_.cols()}; }

 protected:
  /// Copies one caller row of k and v into storage row r, in the declared formats; `call_ends`
  /// marks the last row of an append.
  void write_row(std::size_t r, const double* k, const double* v, bool call_ends = true) {
    const auto row = static_cast<Eigen::Index>(r);
    if constexpr (formats) {
      store(ks_, kst_, k_, r, k, call_ends);
      store(vs_, vst_, v_, r, v, call_ends);
    } else {
      k_.row(row) = Eigen::Map<const Eigen::RowVectorXd>(k, k_.cols()).template cast<scalar>();
      v_.row(row) = Eigen::Map<const Eigen::RowVectorXd>(v, v_.cols()).template cast<scalar>();
    }
  }

  row_matrix k_, v_;
  std::size_t len_ = 0;
  side_storage<typename storage::rules> ks_, vs_;
  stream_state kst_, vst_;

 private:
  using side = side_storage<typename storage::rules>;
  static void store(side& s, stream_state& st, row_matrix& m, std::size_t r, const double* in, bool call_ends) {
    s.append(st, r, in, m.data() + r * m.cols(), call_ends, [&m](std::size_t i) {
      return typename side::row_at{i, m.data() + i * m.cols()};
    });
  }
  Eigen::MatrixXd exposed(const side& s, const stream_state& st, bool zeros) const {
    return group_matrix(
        s, st, 0, len_, [](std::size_t i) { return i; }, zeros);
  }
};

using flat = basic_flat<>;
/// The flat reference storing keys in K and values in V (impls/common/formats.h).
template <storage_format K, storage_format V = K, class Rules = storage_rules>
using flat_stored = stored<basic_flat, flat_rules, K, V, Rules>;

/// Checks q (1-D of width d_k) and emptiness, then runs `run(n, d_k, d_v, q, key, value)`
/// over the stored rows; decode variants and mutants pass their own `run`.
template <class Rules, class Run>
decode_result decode_with(array_view q, const basic_flat<Rules>& c, Run&& run) {
  if (q.rank != 1 || q.dims[0] != c.d_k()) throw shape_error("decode_step: q must be 1-D of width d_k");
  if (c.size() == 0) throw empty_error("decode_step: empty cache");
  const auto k = c.basic_flat<Rules>::keys();
  const auto v = c.basic_flat<Rules>::values();
  return run(
      c.size(), c.d_k(), c.d_v(), q.data, [&](std::size_t i) { return k.data() + i * c.d_k(); },
      [&](std::size_t i) { return v.data() + i * c.d_v(); });
}

/// One decode step over every stored row. Throws empty_error on an empty cache and
/// shape_error unless q is 1-D of width d_k.
template <class Rules>
decode_result decode_step(array_view q, const basic_flat<Rules>& c) {
  return decode_with(q, c, [](auto... a) { return attend<typename Rules::kernel>(a...); });
}

}  // namespace kvconform
