// The digest of an observed stream (docs/port-protocol.md §8): ports answer it instead of their rows.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "properties/trace/trace.h"

namespace kvconform {

/// The digest of `words` as docs/port-protocol.md §8 defines it: the sum of SplitMix64's finaliser
/// over each word plus its 1-based index times the golden-ratio constant, modulo 2^64.
std::uint64_t digest_words(std::span<const std::uint64_t> words);
/// The digest of a stream's rows, widths and positions (not its name or blocks).
std::uint64_t stream_digest(const stream& s);
/// 16 lowercase hexadecimal digits.
std::string digest_hex(std::uint64_t d);

}  // namespace kvconform
