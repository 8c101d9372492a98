// acme's narrow caches (kvconform kind flat): an fp16 cache and a llama.cpp-style q8_0 cache, each also declared f64.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "acme_support.h"
#include "tiny_cache.h"

namespace acme {

/// The rows of a fixed-capacity cache stored by `Codec` (what it keeps of a row, and the doubles
/// it gives back), with statuses instead of exceptions.
template <class Codec>
class coded_cache {
 public:
  coded_cache(std::size_t max_len, std::size_t d_k, std::size_t d_v) : max_(max_len), keys_(d_k), values_(d_v) {}

  status append(kvconform::array_view k, kvconform::array_view v) {
    const auto n = append_steps(k, v, keys_.width, values_.width);
    if (!n) return status(code::bad_shape);
    if (size() + *n > max_) return status(code::full);
    for (std::size_t i = 0; i < *n; ++i) keys_.add(k.data + i * keys_.width), values_.add(v.data + i * values_.width);
    return {};
  }
  std::size_t size() const { return keys_.rows.size(); }
  row_view keys() const { return keys_.view(); }
  row_view values() const { return values_.view(); }
  std::size_t d_k() const { return keys_.width; }
  std::size_t d_v() const { return values_.width; }

 protected:
  struct side {
    explicit side(std::size_t w) : width(w) {}
    std::size_t width;
    std::vector<Codec> rows;
    std::vector<double> shown;  // what the cache attends over, row-major
    void add(const double* x) {
      rows.emplace_back(x, width);
      for (std::size_t j = 0; j < width; ++j) shown.push_back(rows.back().value(j));
    }
    row_view view() const {
      return {shown.data(), static_cast<std::ptrdiff_t>(rows.size()), static_cast<std::ptrdiff_t>(width)};
    }
  };
  std::size_t max_;
  side keys_, values_;
};

template <class Codec>
std::optional<decoded> decode_step(kvconform::array_view q, const coded_cache<Codec>& c) {
  if (q.rank != 1 || q.dims[0] != c.d_k() || c.size() == 0) return std::nullopt;
  const row_view k = c.keys(), v = c.values();
  return attend(
      c.size(), c.d_k(), c.d_v(), q.data, [&](std::size_t i) { return k.data + i * c.d_k(); },
      [&](std::size_t i) { return v.data + i * c.d_v(); });
}

/// A row in IEEE binary16 (the compiler's _Float16 conversion rounds to nearest even).
struct half_row {
  std::vector<_Float16> x;
  half_row(const double* in, std::size_t n) : x(in, in + n) {}
  double value(std::size_t j) const { return static_cast<double>(x[j]); }
};

/// A row in blocks of 32 int8 codes with an fp16 scale each, computed in float as llama.cpp does.
struct q8_0_row {
  static constexpr std::size_t block = 32;
  std::vector<std::int8_t> codes;
  std::vector<_Float16> scales;
  q8_0_row(const double* in, std::size_t n) : codes(n) {
    for (std::size_t b = 0; b < n; b += block) {
      float amax = 0;
      for (std::size_t j = b; j < std::min(b + block, n); ++j)
        amax = std::max(amax, std::fabs(static_cast<float>(in[j])));
      const float d = amax / 127, id = d != 0 ? 1 / d : 0;
      scales.push_back(static_cast<_Float16>(d));
      for (std::size_t j = b; j < std::min(b + block, n); ++j)
        codes[j] =
            static_cast<std::int8_t>(std::clamp(std::nearbyint(static_cast<float>(in[j]) * id), -127.0f, 127.0f));
    }
  }
  double value(std::size_t j) const { return static_cast<double>(static_cast<float>(scales[j / block]) * codes[j]); }
};

/// acme's fp16 cache, declared so.
struct half_cache : coded_cache<half_row> {
  using coded_cache::coded_cache;
  static constexpr kvconform::numeric_profile profile{.keys = kvconform::formats::fp16,
                                                      .values = kvconform::formats::fp16};
};

/// acme's q8_0 cache, declared so; it shows kvconform each block's scale.
struct q8_cache : coded_cache<q8_0_row> {
  using coded_cache::coded_cache;
  static constexpr kvconform::numeric_profile profile{.keys = kvconform::formats::q8_0,
                                                      .values = kvconform::formats::q8_0};
  /// One row per stored row, one column per block.
  struct scale_view {
    std::vector<double> data;
    std::ptrdiff_t n, blocks;
    std::ptrdiff_t rows() const { return n; }
    std::ptrdiff_t cols() const { return blocks; }
    double operator()(std::ptrdiff_t i, std::ptrdiff_t j) const {
      return data[static_cast<std::size_t>(i * blocks + j)];
    }
  };
  scale_view key_scales() const { return view_of(keys_); }
  scale_view value_scales() const { return view_of(values_); }

 private:
  static scale_view view_of(const side& s) {
    scale_view v{{},
                 static_cast<std::ptrdiff_t>(s.rows.size()),
                 static_cast<std::ptrdiff_t>((s.width + q8_0_row::block - 1) / q8_0_row::block)};
    for (const q8_0_row& r : s.rows)
      for (_Float16 d : r.scales) v.data.push_back(static_cast<double>(d));
    return v;
  }
};

/// The same caches declared as double: kvconform must reject them with a message naming the format.
struct half_cache_as_f64 : half_cache {
  using half_cache::half_cache;
  static constexpr kvconform::numeric_profile profile{};
};
struct q8_cache_as_f64 : q8_cache {
  using q8_cache::q8_cache;
  static constexpr kvconform::numeric_profile profile{};
};

}  // namespace acme
