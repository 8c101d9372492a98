// Beam-shaped inputs: (B, H, n, D) blocks and (B, Hq, D) queries from the input classes, masks and reorders.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "properties/generate/input_classes.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// k and v shaped (B, H, n, D) for positions [first, first + n) of one layer; each (row, head)
/// draws its own rows, so rows and heads differ and a gather or head mix-up shows.
void beam_block(const row_source& src, std::size_t batch, std::size_t heads, std::int64_t first, std::size_t n,
                std::uint64_t seed, tensor& k, tensor& v);

/// q shaped (B, Hq, D): the class's query, negated on odd query heads so that a head that reads
/// another head's query shows too (a negated query turns a class into its mirror image).
tensor beam_query(const row_source& src, std::size_t batch, std::size_t q_heads);

/// q shaped (B, Hq, m, D) for a prefill of m positions: the class's query, negated on odd query heads and odd
/// positions, so that a query read for another head or position shows too.
tensor beam_queries(const row_source& src, std::size_t batch, std::size_t q_heads, std::size_t m);

/// A (B, length) mask whose row b masks its first pads[b] positions (left padding): 0 masked, 1 attends.
tensor left_padding_mask(const std::vector<std::size_t>& pads, std::size_t length);

/// How one batch row of a decode's mask is made, as serving engines make them; `a`, `b` and `c`
/// are its parameters (any size: each shape folds them into range), so a row shrinks towards
/// left padding of none.
struct mask_row {
  enum shape : int {
    left_padding,   ///< the first a positions masked (a prompt shorter than the batch's longest)
    window,         ///< after a positions of padding, a sliding window of the last w real positions plus
                    ///< up to two attention sinks at the start of the real ones (a hole between them)
    dropped_draft,  ///< after a positions of padding, a run of rejected draft tokens masked in place
    single_key,     ///< exactly one live position
    fully_masked,   ///< no live position (the beam contract gives zeros)
    arbitrary,      ///< each position live or not, from a hash of a, b, c
    shapes
  };
  int kind = left_padding;
  std::size_t a = 0, b = 0, c = 0;
};
/// The (B, length) mask of one row description per batch row. The generator choice
/// "beam-mask-holes" of KVCONFORM_TEST_DISABLE_GENERATOR (a test-only hook) makes every shape that
/// can leave a hole (window, dropped_draft, arbitrary) left padding instead.
tensor engine_mask(const std::vector<mask_row>& rows, std::size_t length);

/// What the rows of a (B, length) mask are, each flag set when some row is so.
struct mask_shapes {
  bool left_padding = false;   ///< a masked prefix, then only live positions (at least one of each)
  bool hole = false;           ///< a masked position between two live ones
  bool newest_masked = false;  ///< the last position masked in a row that has a live one
  bool single_key = false;     ///< exactly one live position, of two or more
  bool fully_masked = false;   ///< no live position
};
mask_shapes classify_mask(const tensor& mask);

/// The cycle shapes of a reorder, as the map from new row b to old row index[b].
struct reorder_shapes {
  bool identity = false;     ///< every row keeps its own
  bool fixed_point = false;  ///< some row keeps its own while others change
  bool two_cycle = false, three_cycle = false;
  bool long_cycle = false;  ///< a cycle of four rows or more
  bool repeat = false;      ///< a source used by two rows or more, and hence another source dropped
};
reorder_shapes classify_reorder(const std::vector<std::int64_t>& index);

/// A reorder of `batch` rows as beam search makes them: a permutation built from cycles of one,
/// two, three and more rows, and a third of the time rows that continue another cycle's beam
/// (a repeat and a drop, which never close a new cycle). It reads its random choices from
/// `choices` (any values, each folded into its range; missing ones are 0), and all zeros give the
/// simplest reorder with a repeat (row 0 continues row 1), so a failing case shrinks towards it.
/// The generator choice "beam-reorder-3-cycle" of KVCONFORM_TEST_DISABLE_GENERATOR (a test-only
/// hook) removes the three-row cycles.
std::vector<std::int64_t> draw_reorder(std::size_t batch, const std::vector<std::uint64_t>& choices);
/// Random choices for draw_reorder of `batch` rows, as many as it may read, from `seed`.
std::vector<std::uint64_t> reorder_choices(std::size_t batch, std::uint64_t seed);

}  // namespace kvconform
