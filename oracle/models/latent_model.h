// The model of the latent (MLA) kind: a block pool of latent rows whose values are their first d_c entries.
#pragma once

#include "oracle/models/block_pool_model.h"
#include "oracle/numeric/latent_head.h"

namespace kvconform {

/// A block pool (block_pool_model, no preemption) whose appends carry k alone: rows of width d_k = d_c + d_r whose
/// value rows are their first d_v = d_c entries, stored once in the profile's one format with the per-tensor
/// scale k_scale. A decode carries each query head's [q_nope ; q_r] (q (Hq, d_nope + d_r)) and up-projections
/// (w_uk (Hq, d_nope, d_c), w_uv (Hq, d_vh, d_c)); each head's problem is the materialised attention
/// (materialise, docs/numerics.md §3.8), in head order (docs/kinds/latent.md). A prefill's k (m, d_k) carries q
/// (m, Hq, d_nope + d_r) with the same projections, its problems step after step, head after head, each step over
/// the rows up to its own.
class latent_model final : public block_pool_model {
 public:
  /// With `problems` false (the generators' copy, which only needs the state) a decode is judged for refusals alone:
  /// materialising every head is most of a production case's cost.
  latent_model(const cache_config& c, const numeric_profile& p, const policy_set& policies = {}, bool problems = true);

  /// The head shape a well-formed decode (q of rank 2) or prefill (q (m, Hq, d_q), rank 3) of this config has: Hq,
  /// d_nope, d_vh; nullopt for any other.
  struct heads {
    std::size_t count, d_nope, d_vh;
  };
  std::optional<heads> decode_shape(const op& o, std::size_t rank) const;

 private:
  std::optional<std::size_t> steps_of(const op& o) const override;
  std::vector<double> value_row(const op& o, std::size_t i) const override;
  expectation decode(const op& o) const override;
  bool prefill_queries(const op& o, std::size_t steps) const override;
  void prefill_problems(const op& o, std::size_t before, expectation& e) const override;
  /// Every head of query step `step` of o.q over the first `seen` rows of o.seq, as stored.
  std::vector<latent_head> heads_of(const op& o, const heads& shape, std::size_t step, std::size_t seen) const;
  /// Each head's materialised problem over o.seq's stream, in order.
  void judge(const op& o, std::vector<latent_head> heads, expectation& e) const;
  /// free_blocks and bytes_in_use (blocks held x block_size rows of d_k entries in the rows' format).
  void count(snapshot& out) const override;

  bool problems_;
};

}  // namespace kvconform
