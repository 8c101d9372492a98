// The references' integer group quantizer: scales, minima, codes, nibble packing, and the rules a mutant replaces.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "impls/common/element_codec.h"

namespace kvconform {

/// The decisions a group quantizer makes (docs/numerics.md §6.2), one static member each, so that
/// a mutant or variant replaces exactly one. Values of a group are reached through `at(i)`.
struct group_rules : element_rules {
  /// The least and greatest value of a group.
  template <class At>
  static std::pair<double, double> range(std::size_t n, At at) {
    double lo = at(0), hi = at(0);
    for (std::size_t i = 1; i < n; ++i) lo = std::min(lo, at(i)), hi = std::max(hi, at(i));
    return {lo, hi};
  }
  /// Symmetric groups scale by the largest magnitude.
  static double amax(double lo, double hi) { return std::max(std::fabs(lo), std::fabs(hi)); }
  /// The stored scale: the ideal one, formed in double and rounded once to the scale's format.
  static double scale(const storage_format& f, double lo, double hi) {
    const double ideal = f.symmetric ? amax(lo, hi) / f.qmax() : (hi - lo) / f.qmax();
    return store({.element = f.scale_format}, ideal);
  }
  /// The stored minimum of an asymmetric group.
  static double zero(const storage_format& f, double lo) { return store({.element = f.scale_format}, lo); }
  /// A value's code: round to nearest even, clamped into the format's range.
  static long code(const storage_format& f, double x, double scale, double zero) {
    if (scale == 0 || !std::isfinite(scale)) return 0;
    const double lo = f.symmetric ? -static_cast<double>(f.qmax()) : 0.0;
    return static_cast<long>(std::clamp(std::nearbyint((x - zero) / scale), lo, static_cast<double>(f.qmax())));
  }
  /// What a code stands for.
  static double value(double code, double scale, double zero) { return code * scale + zero; }
  /// Where per-token group g of a row starts along d.
  static std::size_t group_first(std::size_t g, std::size_t size) { return g * size; }
  /// Two 4-bit codes per byte: element 2i in the low nibble, element 2i + 1 in the high one.
  static void pack(std::vector<std::uint8_t>& bytes, std::size_t i, unsigned nibble) {
    std::uint8_t& b = bytes[i / 2];
    b = static_cast<std::uint8_t>(i % 2 ? (b & 0x0f) | (nibble << 4) : (b & 0xf0) | nibble);
  }
  static unsigned unpack(const std::vector<std::uint8_t>& bytes, std::size_t i) {
    return i % 2 ? bytes[i / 2] >> 4 : bytes[i / 2] & 0x0f;
  }
};

/// The codes of one row: int8 per value, or two int4 per byte (symmetric codes offset by 8).
template <class Rules>
class row_codes {
 public:
  row_codes() = default;
  row_codes(const storage_format& f, std::size_t width)
      : bits_(f.bits),
        signed_(f.symmetric),
        offset_(f.symmetric && f.bits == 4 ? 8 : 0),
        bytes_((width * f.bits + 7) / 8) {}
  void set(std::size_t i, long code) {
    if (bits_ == 8)
      bytes_[i] = signed_ ? static_cast<std::uint8_t>(static_cast<std::int8_t>(code)) : static_cast<std::uint8_t>(code);
    else
      Rules::pack(bytes_, i, static_cast<unsigned>(code + offset_) & 0x0f);
  }
  long get(std::size_t i) const {
    if (bits_ == 8) return signed_ ? static_cast<std::int8_t>(bytes_[i]) : bytes_[i];
    return static_cast<long>(Rules::unpack(bytes_, i)) - offset_;
  }

 private:
  unsigned bits_ = 8;
  bool signed_ = true;
  long offset_ = 0;
  std::vector<std::uint8_t> bytes_;
};

}  // namespace kvconform
