// The metamorphic rewrites of a prefill every kind with the capability shares (docs/design.md §2.3).
#pragma once

#include <vector>

#include "properties/trace/trace.h"

namespace kvconform {

/// The chunk sizes of a prefill of m >= 2 steps, chosen from its keys' data: chunks of 1, of the primes 2, 3, 5, 7
/// in turn, one step then the rest, or the rest then one step.
std::vector<std::size_t> chunk_sizes(const op& o, std::size_t m);
/// A prefill of m steps as prefills of consecutive chunks of chunk_sizes (so chunks straddle a window, a block or a
/// capacity wherever the prompt does). Any other op stays as it is.
std::vector<op> prefill_as_chunks(const op& o);
/// A prefill as token-by-token decoding: each step appended (1-D, with its token), then decoded with its own query.
std::vector<op> prefill_as_steps(const op& o);

}  // namespace kvconform
