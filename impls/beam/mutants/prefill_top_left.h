// Mutant beam-prefill-top-left (docs/mutants.md): a prefill's causal mask aligned to the chunk's start.
#pragma once

#include "impls/beam/beam.h"

namespace kvconform::mutants {

/// Query i of a prefill sees positions 0 .. i, as if the chunk began the layer: the causal mask of the
/// (m, length + m) scores aligned to their top-left corner, not their bottom-right, so that after held positions
/// query i attends the oldest i + 1 of them instead of every position up to its own (PyTorch's
/// scaled_dot_product_attention with is_causal, pytorch/pytorch #108108). A prefill onto an empty layer is right.
struct prefill_top_left_rules : beam_rules {
  static bool sees(std::size_t /*before*/, std::size_t i, std::size_t j) { return j <= i; }
};
using beam_prefill_top_left = basic_beam<prefill_top_left_rules>;

}  // namespace kvconform::mutants
