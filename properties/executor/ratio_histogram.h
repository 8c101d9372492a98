// The distribution of err/bound over decodes: fixed half-decade bins from 1e-6 to 1, plus under and over.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace kvconform {

/// How many decode problems fell in each err/bound bin (docs/design.md §7). Fixed bins, so that
/// histograms of any run merge by adding counts and counting one decode is a bin search and an
/// increment: bin 0 holds ratios below 1e-6 (exact results included), bin k in 1..12 holds
/// [edges[k-1], edges[k]) (bin 12 closed at 1), and the last bin the failures: ratios above 1, and
/// decodes that failed otherwise (a non-finite output), whose ratio says nothing.
struct ratio_histogram {
  /// Half decades from 1e-6 to 1: the lower edges of bins 1..12, then the upper edge of bin 12.
  static constexpr std::array<double, 13> edges = {1e-6, 3.1622776601683795e-6, 1e-5, 3.1622776601683795e-5,
                                                   1e-4, 3.1622776601683795e-4, 1e-3, 3.1622776601683795e-3,
                                                   1e-2, 3.1622776601683795e-2, 0.1,  0.31622776601683794,
                                                   1.0};
  static constexpr std::size_t bins = edges.size() + 1;
  std::array<std::uint64_t, bins> counts{};

  /// The bin of `ratio`; NaN counts as below 1e-6 (no error measured).
  static std::size_t bin_of(double ratio) {
    if (!(ratio >= edges.front())) return 0;
    if (ratio > edges.back()) return bins - 1;
    return static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end() - 1, ratio) - edges.begin());
  }
  void add(double ratio) { ++counts[bin_of(ratio)]; }
  void add_failure() { ++counts[bins - 1]; }
  void merge(const ratio_histogram& o) {
    for (std::size_t b = 0; b < bins; ++b) counts[b] += o.counts[b];
  }
  std::uint64_t total() const {
    std::uint64_t n = 0;
    for (const std::uint64_t c : counts) n += c;
    return n;
  }
  bool operator==(const ratio_histogram&) const = default;
};

/// err/bound histograms by the input class of the traces they came from (docs/numerics.md §4.1), or
/// by what made a trace without one ("(generation loop)", "(fixed trace)"); only non-empty ones.
using class_histograms = std::map<std::string, ratio_histogram>;

/// Adds `h` to `to[label]` when it counted anything.
inline void add_histogram(class_histograms& to, const std::string& label, const ratio_histogram& h) {
  if (h.total() > 0) to[label].merge(h);
}

}  // namespace kvconform
