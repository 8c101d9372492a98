// The byte format of fuzz inputs: FuzzedDataProvider bytes <-> trace ops, one format for both directions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "properties/generate/fuzz_ops.h"
#include "properties/trace/trace.h"

namespace kvconform::fuzz {

/// Decodes fuzz bytes into a trace of `kind` through the kind's fuzz strategy (properties/executor/kind_table.h).
/// Every input decodes: sizes are drawn in range, and doubles outside the numeric domain are folded
/// into it rather than rejected.
trace decode_bytes(cache_kind kind, const std::uint8_t* data, std::size_t size);

/// Encodes a trace into bytes that decode_bytes maps back to the same trace (for the seed
/// corpus made from the gate's own traces). Values outside the fuzz limits are clamped.
std::vector<std::uint8_t> encode_trace(const trace& t);

/// Whether encode_trace(t) decodes back to exactly t: every size, handle, layer and index within
/// the fuzz limits and every value inside the numeric domain.
bool encodable(const trace& t);

}  // namespace kvconform::fuzz
