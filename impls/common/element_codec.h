// The references' element codecs: doubles to the bit patterns of fp16, bf16, e4m3 and e5m2 and back, by integer
// rounding.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "oracle/numeric/storage_format.h"

namespace kvconform::codec_detail {

/// A binary format's fields: exponent and mantissa bits, and whether the all-ones exponent is
/// reserved for infinity and NaN (IEEE) or only the all-ones pattern is NaN (e4m3fn).
struct layout {
  int exp_bits, man_bits;
  bool ieee;
  constexpr int bias() const { return (1 << (exp_bits - 1)) - 1; }
  constexpr std::uint32_t exp_ones() const { return (1u << exp_bits) - 1; }
  constexpr std::uint32_t man_ones() const { return (1u << man_bits) - 1; }
  constexpr std::uint32_t sign() const { return 1u << (exp_bits + man_bits); }
  constexpr std::uint32_t nan(std::uint32_t payload) const {
    return ieee ? (exp_ones() << man_bits) | payload | (1u << (man_bits - 1)) : (exp_ones() << man_bits) | man_ones();
  }
  constexpr std::uint32_t max_finite() const {
    return ieee ? ((exp_ones() - 1) << man_bits) | man_ones() : (exp_ones() << man_bits) | (man_ones() - 1);
  }
};
constexpr layout layout_of(element_format e) {
  switch (e) {
    case element_format::f16: return {5, 10, true};
    case element_format::bf16: return {8, 7, true};
    case element_format::e4m3: return {4, 3, false};
    case element_format::e5m2: return {5, 2, true};
    default: return {11, 52, true};  // f64, f32: handled by the hardware conversions
  }
}

}  // namespace kvconform::codec_detail

namespace kvconform {

/// Encodes a double into the format's bits, rounding to nearest even on the integer significand;
/// overflow and subnormals follow the declaration. The code's sign bit is its top bit. `sticky`
/// says whether the value meant lies a little above (+1) or below (-1) |x| (a quotient rounded to
/// double), which decides a tie.
inline std::uint32_t encode_element(const storage_format& f, double x, int sticky = 0) {
  const codec_detail::layout L = codec_detail::layout_of(f.element);
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const std::uint32_t sign = (bits >> 63) ? L.sign() : 0;
  const int dexp = static_cast<int>((bits >> 52) & 0x7ff);
  const std::uint64_t dman = bits & ((std::uint64_t{1} << 52) - 1);
  auto overflow = [&] {
    if (f.overflow == overflow_rule::saturate) return sign | L.max_finite();
    if (f.overflow == overflow_rule::nan || !L.ieee) return sign | L.nan(0);
    return sign | (L.exp_ones() << L.man_bits);
  };
  if (dexp == 0x7ff) return dman ? sign | L.nan(static_cast<std::uint32_t>(dman >> (52 - L.man_bits))) : overflow();
  if (dexp == 0 && dman == 0) return sign;
  const std::uint64_t full = dexp ? dman | (std::uint64_t{1} << 52) : dman;
  const int e = dexp ? dexp - 1023 : -1022, emin = 1 - L.bias();
  int top = e > emin ? e : emin;  // exponent of the result's leading bit position
  const int shift = top - L.man_bits - (e - 52);
  std::uint64_t kept = shift >= 64 ? 0 : full >> shift;
  if (shift > 0 && shift < 64) {
    const std::uint64_t rem = full & ((std::uint64_t{1} << shift) - 1), half = std::uint64_t{1} << (shift - 1);
    kept += rem > half || (rem == half && (sticky ? sticky > 0 : (kept & 1) != 0));
  }
  if (kept >> (L.man_bits + 1)) kept >>= 1, ++top;  // rounding carried into the next binade
  const bool normal = (kept >> L.man_bits) != 0;
  const std::uint32_t exp_field = normal ? static_cast<std::uint32_t>(top + L.bias()) : 0;
  const std::uint32_t man = static_cast<std::uint32_t>(kept) & L.man_ones();
  if (exp_field > L.exp_ones() - (L.ieee ? 1 : 0) || (!L.ieee && exp_field == L.exp_ones() && man == L.man_ones()))
    return overflow();
  if (!normal && !f.subnormals) return sign;
  return sign | (exp_field << L.man_bits) | man;
}

/// The double a code stands for.
inline double decode_element(const storage_format& f, std::uint32_t code) {
  const codec_detail::layout L = codec_detail::layout_of(f.element);
  const double sign = (code & L.sign()) ? -1.0 : 1.0;
  const std::uint32_t exp_field = (code >> L.man_bits) & L.exp_ones(), man = code & L.man_ones();
  if ((L.ieee && exp_field == L.exp_ones()) || (!L.ieee && exp_field == L.exp_ones() && man == L.man_ones())) {
    if (L.ieee && man == 0) return sign * std::numeric_limits<double>::infinity();
    const std::uint64_t payload = L.ieee ? std::uint64_t{man} << (52 - L.man_bits) : std::uint64_t{1} << 51;
    return std::bit_cast<double>((sign < 0 ? 1ull << 63 : 0) | 0x7ff0000000000000ull | payload);
  }
  if (exp_field == 0) return sign * std::ldexp(static_cast<double>(man), 1 - L.bias() - L.man_bits);
  return sign *
         std::ldexp(static_cast<double>(man | (1u << L.man_bits)), static_cast<int>(exp_field) - L.bias() - L.man_bits);
}

/// The rules by which the references store element values; a mutant or variant replaces one.
struct element_rules {
  /// x as the format stores it with per-tensor scale s (scaled formats only), read back as a double:
  /// the exact quotient x / s rounded once (the division's remainder breaks a tie), times s.
  static double store_scaled(const storage_format& f, double x, double s) {
    if (!f.scaled || s == 1) return store(f, x);
    const double y = x / s, rem = std::fma(-y, s, x);
    const int sticky = rem == 0 ? 0 : ((rem > 0) == (y > 0) ? 1 : -1);
    return decode_element(f, encode_element(f, y, sticky)) * s;
  }
  /// x as the format stores it, read back as a double.
  static double store(const storage_format& f, double x) {
    if (f.element == element_format::f64)
      return f.subnormals || !(std::fabs(x) < 0x1p-1022) ? x : std::copysign(0.0, x);
    if (f.element == element_format::f32) {
      const float y = static_cast<float>(x);
      return f.subnormals || !(std::fabs(y) < 0x1p-126f) ? y : std::copysign(0.0f, y);
    }
    return decode_element(f, encode_element(f, x));
  }
};

}  // namespace kvconform
