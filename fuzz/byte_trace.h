// The byte format of fuzz inputs: FuzzedDataProvider bytes <-> trace ops, one format for both directions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "properties/trace/trace.h"

namespace kvconform::fuzz {

/// Decodes fuzz bytes into a trace of `kind`. Every input decodes: sizes are drawn in range,
/// and doubles outside the numeric domain are folded into it rather than rejected.
trace decode_bytes(cache_kind kind, const std::uint8_t* data, std::size_t size);

/// Encodes a trace into bytes that decode_bytes maps back to the same trace (for the seed
/// corpus made from the gate's own traces). Values outside the fuzz limits are clamped.
std::vector<std::uint8_t> encode_trace(const trace& t);

/// Whether encode_trace(t) decodes back to exactly t: every size, handle, layer and index within
/// the fuzz limits and every value inside the numeric domain.
bool encodable(const trace& t);

/// Limits that keep one fuzz input cheap enough for >= 1000 exec/s under sanitizers.
inline constexpr std::size_t max_capacity = 32, max_dim = 16, max_ops = 24, max_values = 4096;

}  // namespace kvconform::fuzz
