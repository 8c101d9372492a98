// An fp8 index cache in a block-planar layout (docs/kinds/flat.md, sparse top-k): per block of rows, their e4m3
// codes, then their f32 scales, as DeepSeek V3.2's indexer keeps its keys.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "impls/common/element_codec.h"

namespace kvconform {

/// Rows of `width` index keys, each stored as e4m3 codes with one scale per row (amax / 448 in f32). Block b holds
/// rows [b B, (b + 1) B): B width codes, then B scales. `Interleaved` reads a row as its codes followed by its
/// scale (vLLM #50576's reader), which this writer never wrote.
template <bool Interleaved = false>
class planar_index {
 public:
  static constexpr std::size_t block = 4;
  static constexpr storage_format format{.element = element_format::e4m3, .overflow = overflow_rule::saturate};

  explicit planar_index(std::size_t width) : d_(width) {}

  void push(const double* x) {
    if (n_ % block == 0) bytes_.resize(bytes_.size() + block * (d_ + sizeof(float)), 0);
    double amax = 0;
    for (std::size_t j = 0; j < d_; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float s = static_cast<float>(amax / 448.0);
    unsigned char* codes = bytes_.data() + code_at(n_, false);
    for (std::size_t j = 0; j < d_; ++j) {
      const double y = s == 0 ? 0 : x[j] / s, rem = s == 0 ? 0 : std::fma(-y, s, x[j]);
      const int sticky = rem == 0 ? 0 : ((rem > 0) == (y > 0) ? 1 : -1);
      codes[j] = static_cast<unsigned char>(encode_element(format, y, sticky));
    }
    std::memcpy(bytes_.data() + scale_at(n_, false), &s, sizeof s);
    ++n_;
  }
  /// Keeps the first `rows` rows.
  void truncate(std::size_t rows) {
    n_ = std::min(n_, rows);
    bytes_.resize((n_ + block - 1) / block * block * (d_ + sizeof(float)));
  }
  /// Row r's keys as the reader sees them.
  void read(std::size_t r, double* out) const {
    float s;
    std::memcpy(&s, bytes_.data() + scale_at(r, Interleaved), sizeof s);
    const unsigned char* codes = bytes_.data() + code_at(r, Interleaved);
    for (std::size_t j = 0; j < d_; ++j) out[j] = decode_element(format, codes[j]) * double(s);
  }
  std::size_t size() const { return n_; }
  std::size_t width() const { return d_; }

 private:
  std::size_t block_start(std::size_t r) const { return r / block * block * (d_ + sizeof(float)); }
  std::size_t code_at(std::size_t r, bool interleaved) const {
    return block_start(r) + r % block * (interleaved ? d_ + sizeof(float) : d_);
  }
  std::size_t scale_at(std::size_t r, bool interleaved) const {
    return interleaved ? code_at(r, true) + d_ : block_start(r) + block * d_ + r % block * sizeof(float);
  }

  std::size_t d_, n_ = 0;
  std::vector<unsigned char> bytes_;
};

}  // namespace kvconform
