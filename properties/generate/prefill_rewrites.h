// The metamorphic rewrites of a prefill every kind with the capability shares (docs/design.md §2.3).
#pragma once

#include <vector>

#include "properties/trace/trace.h"

namespace kvconform {

/// A prefill of m steps as prefills of consecutive chunks, chosen from its data: chunks of 1, of the primes 2, 3,
/// 5, 7 in turn, one step then the rest, or the rest then one step (so chunks straddle a window, a block or a
/// capacity wherever the prompt does). Any other op stays as it is.
std::vector<op> prefill_as_chunks(const op& o);
/// A prefill as token-by-token decoding: each step appended (1-D, with its token), then decoded with its own query.
std::vector<op> prefill_as_steps(const op& o);

}  // namespace kvconform
