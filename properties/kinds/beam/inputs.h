// Beam-shaped inputs from the input classes: (B, H, n, D) blocks, (B, Hq, D) queries, left-padding masks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "properties/generate/input_classes.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// k and v shaped (B, H, n, D) for positions [first, first + n) of one layer; each (row, head)
/// draws its own rows, so rows and heads differ and a gather or head mix-up shows.
void beam_block(const row_source& src, std::size_t batch, std::size_t heads, std::int64_t first, std::size_t n,
                std::uint64_t seed, tensor& k, tensor& v);

/// q shaped (B, Hq, D): the class's query, negated on odd query heads so that a head that reads
/// another head's query shows too (a negated query turns a class into its mirror image).
tensor beam_query(const row_source& src, std::size_t batch, std::size_t q_heads);

/// A (B, length) mask whose row b masks its first pads[b] positions (left padding): 0 masked, 1 attends.
tensor left_padding_mask(const std::vector<std::size_t>& pads, std::size_t length);

}  // namespace kvconform
