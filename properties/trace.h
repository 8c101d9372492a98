// The trace language: the one vocabulary of operations shared by generators, fuzzers, JSON and ports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "impls/array_view.h"

namespace kvconform {

/// The cache kinds of DESIGN section 2.
enum class cache_kind { flat, ring };
const char* to_string(cache_kind k);
std::optional<cache_kind> kind_from_string(const std::string& s);

/// A dense row-major array with its shape, owned by a trace op.
struct tensor {
  std::vector<std::size_t> shape;
  std::vector<double> data;

  static tensor vector(std::vector<double> d) {
    const std::size_t n = d.size();
    return {{n}, std::move(d)};
  }
  static tensor matrix(std::size_t rows, std::size_t cols, std::vector<double> d) {
    return {{rows, cols}, std::move(d)};
  }
  /// True when data.size() equals the product of the shape (rank <= 4).
  bool consistent() const;
  array_view view() const { return view_of(data.data()); }
  array_view view_of(const double* storage) const;
  friend bool operator==(const tensor&, const tensor&);  ///< bitwise on data
};

/// Operation names. `append`: k, v. `decode`: q.
enum class op_kind { append, decode };
const char* to_string(op_kind k);
std::optional<op_kind> op_kind_from_string(const std::string& s);

/// Values an op must produce, when a trace pins them (the seed's worked example, vectors).
struct pinned {
  std::optional<bool> accepted;
  std::optional<std::size_t> size;
  std::vector<double> output, weights;  ///< compared after rounding to `decimals`
  int decimals = 8;
};

/// One operation of a trace with its data.
struct op {
  op_kind kind = op_kind::append;
  tensor k, v, q;
  std::optional<pinned> expect;
};

/// The construction parameters of a cache. `capacity` is max_len (flat) or the window (ring).
struct cache_config {
  cache_kind kind = cache_kind::flat;
  std::size_t capacity = 0, d_k = 0, d_v = 0;
  friend bool operator==(const cache_config&, const cache_config&) = default;
};

/// A replayable trace: the cache it builds, its ops, and where it came from.
struct trace {
  static constexpr int schema_version = 1;
  cache_config config;
  std::vector<op> ops;
  std::string implementation;  ///< registry name it failed on, if any
  std::string property;        ///< the property that produced it, if any
  std::string note;            ///< the failure message when saved
};

/// A short human-readable rendering of an op (shapes, not data), for messages and `show`.
std::string describe(const op& o);
std::string describe(const cache_config& c);

/// Everything observable about a cache between ops, in a form every kind shares: named
/// streams of rows (flat and ring have one) and named integer counters (size, total, ...).
struct stream {
  std::string name;
  std::size_t d_k = 0, d_v = 0;
  std::vector<double> keys, values;  ///< rows x d_k and rows x d_v
  std::vector<std::int64_t> positions;  ///< absolute step index per row, when the kind has them
  std::size_t rows() const { return d_k ? keys.size() / d_k : 0; }
};
struct snapshot {
  std::vector<stream> streams;
  std::vector<std::pair<std::string, std::int64_t>> counters;
};

/// The first difference between an expected and an observed snapshot, or "" when equal.
/// Rows compare bit-for-bit.
std::string diff(const snapshot& expected, const snapshot& observed);

}  // namespace kvconform
