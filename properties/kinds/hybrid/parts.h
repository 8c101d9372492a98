// The parts of the hybrid kind that its sources share: its op mix, layouts, op builders, generators and fuzz strategy.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "properties/generate/fuzz_ops.h"
#include "properties/generate/input_classes.h"
#include "properties/generate/property.h"

namespace kvconform::kinds {

/// Which layer types a property's configs must have (besides what they draw).
enum hybrid_layout_need : unsigned {
  need_window = 1,   ///< a sliding window
  need_mixed = 2,    ///< full and sliding writing layers both
  need_shared = 4,   ///< a shared layer
  need_cross = 8,    ///< a cross-attention layer
  need_prefix = 32,  ///< prefix caching on (for caches with the capability prefix)
  need_tight = 16,   ///< 3 to 8 blocks of 2 rows or more and no cross layer: the window's frees must serve
};

/// Relative weights of the ops a hybrid property draws (0 = never), and the layouts it needs.
struct hybrid_mix {
  int append = 6;      ///< 1 to block_size + 1 steps, capped at what fits
  int fill = 0;        ///< the most steps that fit
  int overfill = 0;    ///< the most that fit plus 1 to 3
  int empty = 1;       ///< 0 steps
  int bad_shape = 0;   ///< a wrong layer count, width or rank, or k and v differing in steps
  int decode = 3;      ///< of any layer
  int bad_decode = 0;  ///< q of the wrong width or rank, or a layer past the last
  int create = 1;
  int fork = 1;
  int release = 1;
  int stale = 0;  ///< an append, decode, fork or release naming a released or never-issued handle
  /// An append to a block's end, a fork, an append of the most steps that fit to its parent, and the fork's
  /// release: the sliding blocks the parent's window left go back to a dry pool; then a block's worth more steps,
  /// for which the full group takes one of them.
  int slide_away = 0;
  /// With prefix caching: appends that carry a sequence's window past a few blocks, then a create whose prompt is
  /// its tokens cut a block or two behind the window's end, so the full group's hit is longer than the sliding
  /// group's.
  int behind_window = 0;
  /// Behind the capability prefill: 1 to two windows and a block of steps (fewer when the pool is short), with
  /// each layer's query of each step.
  int prefill = 0;
  unsigned needs = 0;  ///< hybrid_layout_need bits
};

/// Layers the snapshot and decode name: the decoder's, then the cross layer.
inline std::size_t hybrid_layer_count(const cache_config& c) { return c.layers + (c.cross > 0 ? 1 : 0); }
/// An append of n steps of `src` at position `first` to every writing layer of seq: (writing, n, d) arrays.
op hybrid_append_op(const row_source& src, const cache_config& c, std::int64_t seq, std::int64_t first, std::size_t n,
                    std::uint64_t seed);
/// A create with the encoder's rows (cross, d_k) and (cross, d_v), and its prompt's tokens.
op hybrid_create_op(const row_source& src, const cache_config& c, std::uint64_t seed,
                    std::vector<std::int64_t> prompt = {});
/// n tokens drawn from `seed` (an append's, one per step).
std::vector<std::int64_t> hybrid_tokens(std::uint64_t seed, std::size_t n);

case_generator hybrid_cases(hybrid_mix mix);
/// The targeted numeric search's move (kind_table.h): the rows of k and v read last by the decode that ends `t`.
std::optional<trace> hybrid_lengthen(const trace& t, const tensor& k, const tensor& v);
void add_hybrid_properties(std::vector<property>& ps);
void hybrid_fuzz_config(byte_io& io, cache_config& c);
std::unique_ptr<fuzz_ops> hybrid_fuzz_ops(byte_io& io, const cache_config& c);

}  // namespace kvconform::kinds
