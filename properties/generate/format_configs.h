// Configs fitted to a cache's declared storage formats: per-tensor scales, widths with several groups, room for chunks.
#pragma once

#include <cstdint>

#include "oracle/numeric/numeric_profile.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// The per-tensor scale with code `code`: 1 for code 0, else bf16-representable numbers in [2^-3, 2^5)
/// (a cache computing in float holds them exactly); the fuzz byte format and the generators share it.
double scale_of_code(std::uint64_t code);
/// The code of a scale from scale_of_code, or 0 (scale 1) for any other value.
std::uint64_t code_of_scale(double scale);
inline constexpr std::uint64_t scale_codes = 8 * 128;

/// `c` fitted to the formats `p` declares (docs/numerics.md §6.5): widths drawn from the quick set
/// mapped so that per-token groups of G see a short group, a full one and several (w -> about
/// G/4 .. 2.5 G), capacities scaled by ceil(chunk / 4) so that chunks of quantized rows fill, and
/// the per-tensor scales of scaled formats from `k_code` and `v_code`. A double cache's config is unchanged.
/// A `long_case` (docs/design.md §4.4) gets its scales only: its hundreds of rows fill any chunk, and its
/// narrow rows stay a short group, so that it costs about what it costs a double cache. A latent config's widths
/// stay as its generator drew them (whole groups in each value row, docs/kinds/latent.md).
cache_config fit_formats(cache_config c, const numeric_profile& p, std::uint64_t k_code, std::uint64_t v_code,
                         bool long_case = false);

}  // namespace kvconform
