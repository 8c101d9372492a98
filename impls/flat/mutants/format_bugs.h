// Storage-format mutants of the flat kind (docs/mutants.md): each replaces one rule of the reference's storage policy.
#pragma once

#include <cmath>

#include "impls/flat/flat.h"

namespace kvconform::mutants {

/// fp16 ties rounded half away from zero where nearest-even is declared.
struct half_away_rules : storage_rules {
  static double store(const storage_format& f, double x) {
    const std::uint32_t code = encode_element(f, x);
    const double y = decode_element(f, code), up = decode_element(f, code + 1);
    const bool tie = std::fabs(y) < std::fabs(x) && std::fabs(x - y) == std::fabs(up - x);
    return tie ? up : y;
  }
};
/// fp16 subnormals flushed to zero where keeping them is declared.
struct flush_subnormal_rules : storage_rules {
  static double store(const storage_format& f, double x) {
    const double y = storage_rules::store(f, x);
    return std::fabs(y) < 0x1p-14 ? std::copysign(0.0, y) : y;
  }
};
/// The symmetric scale taken from max(x) instead of max|x|: a group whose extreme is negative is clipped.
struct signed_max_rules : storage_rules {
  static double scale(const storage_format& f, double lo, double hi) {
    return f.symmetric ? store({.element = f.scale_format}, hi / f.qmax()) : storage_rules::scale(f, lo, hi);
  }
};
/// int4 codes unpacked from the wrong nibbles: element 2i comes back as element 2i + 1 and vice versa.
struct nibble_swap_rules : storage_rules {
  static unsigned unpack(const std::vector<std::uint8_t>& bytes, std::size_t i) {
    return i % 2 ? bytes[i / 2] & 0x0f : bytes[i / 2] >> 4;
  }
};
/// The quantizer's zero point one code off the dequantizer's: every value comes back a step high.
struct zero_off_by_one_rules : storage_rules {
  static long code(const storage_format& f, double x, double scale, double zero) {
    return std::min<long>(storage_rules::code(f, x, scale, zero) + 1, static_cast<long>(f.qmax()));
  }
};
/// The asymmetric scale formed in fp16 arithmetic: max - min overflows to infinity once it passes
/// 65504, though each value fits fp16.
struct fp16_range_rules : storage_rules {
  static double scale(const storage_format& f, double lo, double hi) {
    const storage_format h = formats::fp16;
    const double range = store(h, store(h, hi) - store(h, lo));
    return store(h, range / f.qmax());
  }
};
/// The residual checked against R only at the end of an append: a bulk append that passes R never quantizes.
struct residual_never_rules : storage_rules {
  static bool chunk_due(std::size_t pending, std::size_t chunk, bool call_ends) {
    return call_ends && pending == chunk;
  }
};
/// A completed per-channel group quantized with the previous group's scales and minima.
struct stale_channel_rules : storage_rules {
  static constexpr bool stale_channel_scales = true;
};

using flat_fp16_half_away = flat_stored<formats::fp16, formats::fp16, half_away_rules>;
using flat_fp16_flush_subnormals = flat_stored<formats::fp16, formats::fp16, flush_subnormal_rules>;
using flat_q8_signed_max = flat_stored<formats::q8_0, formats::q8_0, signed_max_rules>;
using flat_q4_nibble_swap = flat_stored<formats::q4_1, formats::q4_1, nibble_swap_rules>;
using flat_q4_zero_off_by_one = flat_stored<formats::q4_1, formats::q4_1, zero_off_by_one_rules>;
using flat_q4_fp16_range = flat_stored<formats::q4_1, formats::q4_1, fp16_range_rules>;
using flat_kivi_residual_never = flat_stored<kivi_keys, kivi_values, residual_never_rules>;
using flat_kivi_stale_scales = flat_stored<kivi_keys, kivi_values, stale_channel_rules>;

}  // namespace kvconform::mutants
