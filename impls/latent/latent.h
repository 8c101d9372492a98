// The reference latent (MLA) cache: one row [c ; k_r] per token in a paged pool, its values read from the same rows.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include "impls/common/append_steps.h"
#include "impls/common/attention.h"
#include "impls/common/formats.h"
#include "impls/paged/paged.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// The rules of the latent reference; mutants replace one (impls/latent/mutants/*.h).
struct latent_rules : paged_rules {
  static constexpr bool shared_values = true;  // the values are the first d_c entries of each key row
  static constexpr latent_path path = latent_path::absorbed;
  /// The order a prefill multiplies in: materialised, as vLLM's MLA backends do (a prefill is compute-bound, a
  /// decode memory-bound), so that prefill_equals_decode_steps holds the two orders to the same oracle.
  static constexpr latent_path prefill_path = latent_path::materialised;
  /// Whether q_r . k_r takes part in the scores.
  static constexpr bool rotary_scores = true;
  /// The head whose W_uk folds query head h's q_nope (of `heads`).
  static std::size_t absorbing_head(std::size_t h, std::size_t /*heads*/) { return h; }
  /// The softmax scale: the full head's, 1/sqrt(d_nope + d_r), whatever width the scores are taken over.
  static double scale(std::size_t d_nope, std::size_t d_r, std::size_t /*d_c*/) {
    return 1 / std::sqrt(static_cast<double>(d_nope + d_r));
  }
  /// What a value read from a stored row is multiplied by, given the rows' per-tensor scale: 1, as the rows hold
  /// their exposed values (code x scale) for keys and values alike.
  static double value_factor(double /*k_scale*/) { return 1; }
  /// The slots of a sequence's table a decode attends: its rows.
  static std::size_t attended(std::size_t rows, std::size_t /*table_slots*/) { return rows; }
  /// The rows [first, end) a prefill's step i reads, `before` rows held before the prefill: its own and every row
  /// before it.
  static std::pair<std::size_t, std::size_t> prefill_rows(std::size_t before, std::size_t i) {
    return {0, before + i + 1};
  }
};

/// A paged pool of latent rows of width d_k = d_c + d_r, whose value rows are their first d_v = d_c entries
/// (basic_paged with shared values: the same storage, never a copy). Pool operations are paged's; a decode takes each
/// query head's [q_nope ; q_r] and up-projections and gives each head's output and weights.
template <class Rules = latent_rules>
class basic_latent : private basic_paged<Rules> {
  using pool = basic_paged<Rules>;

 public:
  using seq_id = typename pool::seq_id;
  static constexpr latent_path path = Rules::path;
  /// Its rows' one format (values are the same storage) and its decode order.
  static constexpr numeric_profile profile{
      .keys = Rules::storage::keys, .values = Rules::storage::keys, .latent = Rules::path};

  basic_latent(std::size_t num_blocks, std::size_t block_size, std::size_t d_k, std::size_t d_v)
      : pool(num_blocks, block_size, d_k, d_v) {
    if (d_v >= d_k) throw shape_error("latent: d_k (d_c + d_r) must exceed d_v (d_c)");
  }

  using pool::append, pool::block_size, pool::block_table, pool::bytes_in_use, pool::create, pool::d_k, pool::d_v,
      pool::fork, pool::free_blocks, pool::keys, pool::num_blocks, pool::ref_count, pool::release, pool::rollback,
      pool::size, pool::values;
  /// Integer groups (docs/numerics.md §6.2): the value side's are the key rows' first d_v / G groups.
  using pool::key_scales, pool::key_zeros, pool::value_scales, pool::value_zeros;

  void set_scales(double k_scale, double v_scale) requires(Rules::storage::keys.scaled) {
    pool::set_scales(k_scale, v_scale);
    k_scale_ = k_scale;
  }

  /// Attends with each query head h of q (Hq, d_nope + d_r), whose key is [W_uk[h] c ; k_r] and value W_uv[h] c, over
  /// s's rows (w_uk (Hq, d_nope, d_c), w_uv (Hq, d_vh, d_c)): output (Hq, d_vh), weights (Hq, size). index_error for an
  /// unknown s, shape_error for shapes that disagree, empty_error for a sequence with no rows.
  decode_result decode_step(seq_id s, array_view q, array_view w_uk, array_view w_uv) const {
    const std::size_t n = size(s);
    const head_shape h = heads_of(q, w_uk, w_uv, 2);
    if (n == 0) throw empty_error("latent decode: empty sequence");
    const std::vector<const double*> at = this->key_rows(s, Rules::attended(n, this->table_slots(s)));
    decode_result r = zeros(h, 1, n);
    attend_heads(h, path, at, 0, q.data, w_uk, w_uv, 0, n, r);
    return r;
  }

  /// Appends the m rows of k to s as append does, then attends with step i's heads q[i] (q (m, Hq, d_nope + d_r),
  /// the projections as decode_step's, in the order Rules::prefill_path) over the rows before it and the chunk's
  /// first i + 1: output (m, Hq, d_vh), weights (m, Hq, size before + m). Refused as append is, or for the shapes of q
  /// and the projections, before anything changes.
  decode_result prefill(seq_id s, array_view k, array_view q, array_view w_uk, array_view w_uv) {
    const std::size_t before = size(s), steps = checked_append_steps(k, k, d_k(), d_k());
    const head_shape h = heads_of(q, w_uk, w_uv, 3);
    if (q.dims[0] != steps) throw shape_error("latent prefill: q must have one (Hq, d_nope + d_r) per step of k");
    append(s, k);
    const std::vector<const double*> at = this->key_rows(s, before + steps);
    decode_result r = zeros(h, steps, before + steps);
    for (std::size_t i = 0; i < steps; ++i) {
      const auto [first, end] = Rules::prefill_rows(before, i);
      attend_heads(h, Rules::prefill_path, rows_read(at).subspan(first, end - first), first,
                   q.data + i * h.heads * q.dims[2], w_uk, w_uv, i, before + steps, r);
    }
    return r;
  }

 private:
  struct head_shape {
    std::size_t heads, d_nope, d_r, d_c, d_vh;
  };
  using matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using cmap = Eigen::Map<const matrix>;
  using rows_read = std::span<const double* const>;

  /// The heads of q, of rank `rank` (a decode's (Hq, d_q) or a prefill's (m, Hq, d_q)), and its projections.
  head_shape heads_of(array_view q, array_view w_uk, array_view w_uv, std::size_t rank) const {
    const std::size_t d_c = d_v(), d_r = d_k() - d_v();
    const std::size_t* qd = q.dims.data() + (rank - 2);  // (Hq, d_q)
    if (q.rank != rank || qd[0] == 0 || qd[1] <= d_r || w_uk.rank != 3 || w_uk.dims[0] != qd[0] ||
        w_uk.dims[1] != qd[1] - d_r || w_uk.dims[2] != d_c || w_uv.rank != 3 || w_uv.dims[0] != qd[0] ||
        w_uv.dims[1] == 0 || w_uv.dims[2] != d_c)
      throw shape_error(rank == 2 ? "latent decode: q (Hq, d_nope + d_r), w_uk (Hq, d_nope, d_c), w_uv (Hq, d_vh, d_c)"
                                  : "latent prefill: q (m, Hq, d_nope + d_r), w_uk (Hq, d_nope, d_c), w_uv (Hq, d_vh, "
                                    "d_c)");
    return {qd[0], qd[1] - d_r, d_r, d_c, w_uv.dims[1]};
  }
  static decode_result zeros(const head_shape& h, std::size_t steps, std::size_t n) {
    return {Eigen::VectorXd::Zero(static_cast<Eigen::Index>(steps * h.heads * h.d_vh)),
            Eigen::VectorXd::Zero(static_cast<Eigen::Index>(steps * h.heads * n))};
  }
  /// Step `step`'s heads (queries from qs, Hq rows of d_nope + d_r) over the rows `at`, the first of them row
  /// `first`, into r's rows of that step (output (steps, Hq, d_vh), weights (steps, Hq, n)).
  void attend_heads(const head_shape& h, latent_path order, rows_read at, std::size_t first, const double* qs,
                    array_view w_uk, array_view w_uv, std::size_t step, std::size_t n, decode_result& r) const {
    for (std::size_t x = 0; x < h.heads; ++x) {
      const double* qh = qs + x * (h.d_nope + h.d_r);
      const decode_result one =
          order == latent_path::absorbed ? absorbed(h, x, at, qh, w_uk, w_uv) : materialised(h, x, at, qh, w_uk, w_uv);
      const std::size_t row = step * h.heads + x;
      r.output.segment(static_cast<Eigen::Index>(row * h.d_vh), static_cast<Eigen::Index>(h.d_vh)) = one.output;
      const std::size_t seen = std::min(n - first, at.size());  // a decode may attend past its rows (a mutant)
      r.weights.segment(static_cast<Eigen::Index>(row * n + first), static_cast<Eigen::Index>(seen)) =
          one.weights.head(static_cast<Eigen::Index>(seen));
    }
  }
  static cmap projection(array_view w, std::size_t head) {
    const auto rows = static_cast<Eigen::Index>(w.dims[1]), cols = static_cast<Eigen::Index>(w.dims[2]);
    return {w.data + head * w.dims[1] * w.dims[2], rows, cols};
  }
  const double* value_of(const double* row) const { return row + Rules::value_offset(d_k(), d_v()); }

  /// FlashMLA's order: q~ = W_uk^T q_nope, scores [q~ ; q_r] . [c ; k_r] with the full head's scale, the latent
  /// average o = sum_i w_i c_i, then W_uv o.
  decode_result absorbed(const head_shape& h, std::size_t x, rows_read at, const double* qh, array_view w_uk,
                         array_view w_uv) const {
    Eigen::VectorXd query(static_cast<Eigen::Index>(h.d_c + h.d_r));
    query.head(static_cast<Eigen::Index>(h.d_c)) =
        projection(w_uk, Rules::absorbing_head(x, h.heads)).transpose() *
        Eigen::Map<const Eigen::VectorXd>(qh, static_cast<Eigen::Index>(h.d_nope));
    for (std::size_t j = 0; j < h.d_r; ++j)
      query[static_cast<Eigen::Index>(h.d_c + j)] = Rules::rotary_scores ? qh[h.d_nope + j] : 0.0;
    const double scale = Rules::scale(h.d_nope, h.d_r, h.d_c), factor = Rules::value_factor(k_scale_);
    std::vector<double> w(at.size());
    double m = -std::numeric_limits<double>::infinity(), l = 0;
    for (std::size_t i = 0; i < at.size(); ++i)
      m = std::max(m, w[i] = dot_product<double>(at[i], query.data(), d_k()) * scale);
    for (double& wi : w) l += (wi = std::exp(wi - m));
    Eigen::VectorXd latent = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(h.d_c));
    for (std::size_t i = 0; i < at.size(); ++i)
      latent += (w[i] /= l) * factor * Eigen::Map<const Eigen::VectorXd>(value_of(at[i]), latent.size());
    decode_result r{projection(w_uv, x) * latent,
                    Eigen::Map<const Eigen::VectorXd>(w.data(), static_cast<Eigen::Index>(w.size()))};
    return r;
  }

  /// Each head's keys [W_uk c_i ; k_r,i] and values W_uv c_i built first, then a plain decode over them.
  decode_result materialised(const head_shape& h, std::size_t x, rows_read at, const double* qh, array_view w_uk,
                             array_view w_uv) const {
    const auto n = static_cast<Eigen::Index>(at.size()), d_head = static_cast<Eigen::Index>(h.d_nope + h.d_r);
    matrix keys(n, d_head), values(n, static_cast<Eigen::Index>(h.d_vh));
    for (Eigen::Index i = 0; i < n; ++i) {
      const double* row = at[static_cast<std::size_t>(i)];
      const auto d_c = static_cast<Eigen::Index>(h.d_c);
      const Eigen::Map<const Eigen::VectorXd> c(row, d_c), v(value_of(row), d_c);
      keys.row(i).head(static_cast<Eigen::Index>(h.d_nope)) = (projection(w_uk, x) * c).transpose();
      keys.row(i).tail(static_cast<Eigen::Index>(h.d_r)) =
          Eigen::Map<const Eigen::RowVectorXd>(row + h.d_c, static_cast<Eigen::Index>(h.d_r));
      values.row(i) = (projection(w_uv, x) * v).transpose() * Rules::value_factor(k_scale_);
    }
    return attend(
        at.size(), h.d_nope + h.d_r, h.d_vh, qh, [&](std::size_t i) { return keys.data() + i * keys.cols(); },
        [&](std::size_t i) { return values.data() + i * values.cols(); });
  }

  double k_scale_ = 1;
};

using latent = basic_latent<>;
/// The latent reference storing its rows in K (keys and values alike: they are the same storage).
template <storage_format K, class Rules = storage_rules, class KindRules = latent_rules>
using latent_stored = basic_latent<format_rules<KindRules, K, K, Rules>>;

}  // namespace kvconform
