// The rows and queries of each input class (docs/numerics.md §4.1): generators that force each regime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "oracle/numeric/input_class.h"
#include "oracle/numeric/storage_format.h"

namespace kvconform {

/// Rows and queries of one class around an anchor a (entries +-1, so |a|^2 = d_k): with
/// q = a, a key (tau / sqrt(d_k)) a + noise scores tau plus the noise's projection.
class row_source {
 public:
  row_source(input_class c, std::size_t d_k, std::size_t d_v, std::uint64_t anchor_seed);

  /// Appends n rows for absolute positions first, first + 1, ... drawn from `seed`. Not thread-safe: it
  /// keeps its draws (a source belongs to one trace's generation).
  void rows(std::int64_t first, std::size_t n, std::uint64_t seed, std::vector<double>& keys,
            std::vector<double>& values) const;
  /// The storage formats (and per-tensor scales) `format_edges` draws its values for.
  void set_formats(const storage_format& keys, const storage_format& values, double k_scale, double v_scale) {
    formats_[0] = keys, formats_[1] = values, scales_[0] = k_scale, scales_[1] = v_scale;
    drawn_.clear();
  }
  /// A cache declaring learned sinks (docs/numerics.md §7.1): every decode and prefill carries a sink logit.
  void set_learned_sinks(bool on) { sinks_ = on; }
  bool learned_sinks() const { return sinks_; }
  /// The sink logit of a decode at `position`: one of a few values from well below to well above typical scores,
  /// fixed by the trace's anchor and the position.
  double sink_logit(std::int64_t position) const;
  /// A cache declaring sparse top-k (docs/numerics.md §7.4): appends carry index keys, decodes and prefills the
  /// indexer's queries and weights, `heads` of `width` each.
  void set_indexer(std::size_t heads, std::size_t width) { index_heads_ = heads, index_width_ = width; }
  bool indexes() const { return index_width_ > 0; }
  std::size_t index_heads() const { return index_heads_; }
  std::size_t index_width() const { return index_width_; }
  /// The index key of the step at `position`, fixed by the anchor and the position: Gaussian entries at one of five
  /// magnitudes (so that row scales differ), and one position in four repeats the key of two positions before, so
  /// that index scores tie exactly.
  std::vector<double> index_key(std::int64_t position) const;
  /// The indexer's queries (heads x width) and then its head weights (heads, from -0.5 to 1.5) for a query at
  /// `position`.
  std::vector<double> index_query(std::int64_t position) const;
  /// The query of this class (the same for every decode of a trace).
  const std::vector<double>& query() const { return q_; }
  input_class kind() const { return class_; }
  std::size_t d_k() const { return d_k_; }
  std::size_t d_v() const { return d_v_; }

 private:
  input_class class_;
  std::size_t d_k_, d_v_;
  std::vector<double> anchor_, q_;
  double sign_;
  bool sinks_ = false;
  std::uint64_t anchor_seed_;
  std::size_t index_heads_ = 0, index_width_ = 0;
  storage_format formats_[2] = {};
  double scales_[2] = {1, 1};
  template <class Rng>
  double edge_value(Rng& rng, int side) const;
  void draw(std::int64_t first, std::size_t n, std::uint64_t seed, std::vector<double>& keys,
            std::vector<double>& values) const;
  /// Every draw so far, by its arguments: a generated op that is made from the model state when it runs asks
  /// for the same rows when it is generated and when it runs (its precondition, its run, the model's update).
  struct drawn {
    std::vector<double> keys, values;
  };
  mutable std::map<std::tuple<std::int64_t, std::size_t, std::uint64_t>, drawn> drawn_;
};

}  // namespace kvconform
