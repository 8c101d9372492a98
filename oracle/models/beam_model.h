// The model of the beam kind: per layer, per batch row, per kv head, exact rows; per-layer lengths.
#pragma once

#include <cstddef>
#include <vector>

#include "oracle/models/model.h"

namespace kvconform {

/// The byte budget the memory counters size a batch against (largest B x T that fits).
inline constexpr std::size_t beam_memory_budget = std::size_t{1} << 20;

/// Rows kept as plain nested vectors: layers_[l][b][h] holds the keys and values of row b, kv
/// head h of layer l, one vector per position. A reorder copies whole rows by value, so rows
/// can never alias; a layer's length is the number of positions its rows hold. A prefill is an
/// update at the length whose queries each attend causally (docs/numerics.md §3.7).
class beam_model final : public model {
 public:
  beam_model(const cache_config& c, const numeric_profile& p);

  expectation apply(const op& o) override;
  /// One stream per (layer, row, kv head) in that order, named "layer l row b head h"; counters
  /// "layer l length" and the memory formulas (bytes, bytes_per_token, max_batch_tokens).
  snapshot observe() const override;

  /// Filled positions of a layer: the positions its rows hold (every config has B, H >= 1).
  std::size_t length(std::size_t layer) const { return layers_[layer][0][0].size(); }
  const cache_config& config() const { return config_; }

 private:
  using batch_row = std::vector<stored_stream>;  // H kv heads
  using layer = std::vector<batch_row>;          // B rows

  expectation update(const op& o);
  /// Why an update would be refused (none: accepted); write performs an accepted one.
  expectation update_refusals(const op& o) const;
  void write(const op& o);
  expectation reorder(const op& o);
  expectation decode(const op& o);
  expectation prefill(const op& o);
  /// The problems of an accepted prefill of m positions onto `before`, in the order of its answer: (b, h, i).
  void prefill_problems(const op& o, std::size_t before, std::size_t m, expectation& e) const;

  cache_config config_;
  numeric_profile profile_;
  std::vector<layer> layers_;
};

}  // namespace kvconform
