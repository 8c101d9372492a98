// Mutants of sparse top-k (docs/mutants.md, docs/numerics.md §7.4), each after an engine's report.
#pragma once

#include "impls/flat/variants/declared_sparse.h"

namespace kvconform::mutants {

/// mlx-lm PR #531: top-k taken per index head (each head's k best attended) instead of over their sum.
struct per_head_rules : sparse_rules {
  static constexpr bool per_head = true;
};
/// mlx-lm PR #531: the indexer's ReLU missing, so a head's negative score lowers a row's sum.
struct no_relu_rules : sparse_rules {
  static constexpr bool relu = false;
};
/// vLLM #50576: a reader takes the block-planar fp8 index cache (codes, then scales) as row-interleaved.
struct interleaved_rules : sparse_rules {
  static constexpr bool interleaved_read = true;
};

using flat_topk_per_head = flat_sparse<declared::dsa, per_head_rules>;
using flat_index_no_relu = flat_sparse<declared::dsa, no_relu_rules>;
using flat_index_planar_as_interleaved = flat_sparse<declared::dsa, interleaved_rules>;

}  // namespace kvconform::mutants
