// The targeted numeric search's moves: changes to a trace's numbers (and its length) aimed at one decode's err/bound.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

#include "oracle/numeric/attention_problem.h"
#include "oracle/numeric/numeric_profile.h"
#include "properties/trace/trace.h"

namespace kvconform::search {

/// A trace whose last op is the decode the search aims at (the others were dropped), with what the
/// kind's model says about it: which ops it accepts, and that decode's attention problems (the rows
/// it attends, as stored).
struct candidate {
  trace t;
  std::vector<char> accepted;
  std::vector<attention_problem> problems;
};

/// Fills in `accepted` and `problems` from the kind's model; false unless the last op is a decode
/// the model accepts with at least one row to attend, over rows of the trace (not a latent head's materialised keys).
bool examine(candidate& c, const numeric_profile& p);

/// The trace of `ops` on `config` cut after op `at` (a decode), with every other decode dropped:
/// decodes change no state, so the rows `at` attends stay the same and each search trace judges one decode.
trace focus(const cache_config& config, const std::vector<op>& ops, std::size_t at);

/// What a move does (docs/numerics.md §4.4). Every move keeps the trace's structure valid for its
/// kind: it changes numbers of k, v and q only, except that `max_past_tile`, `tiny_tail` and
/// `repeated_rows` append rows right before the decode through the kind table (kind_descriptor::lengthen).
enum class move {
  max_past_tile,  ///< more than a tile (32, 64, 128) of rows, the newest the maximum by a gap
  tiny_tail,      ///< rows whose weights span the bottom of the working precision's normal range
  repeated_rows,  ///< a long run of copies of one row: coherent summation errors
  near_tie,       ///< scores a tiny gap below the maximum
  cancellation,   ///< key components orthogonal to q: |k| q much larger than the score
  values,         ///< values offset, spread over many magnitudes, or alternating so the output cancels
  magnitude,      ///< the query scaled: every score larger or smaller
  reroll,         ///< the query nudged by a relative 2^-45 .. 2^-20: every rounding drawn again (hill climbing)
};

using random_engine = std::mt19937_64;

/// Applies `m` to `c` with parameters drawn from `rng` and examines the result; `canonical` keeps
/// the parameters in the move's most revealing regime (the first round's schedule). False when the
/// move does not apply (no rows to shape, d_k = 1 for cancellation, a kind that cannot lengthen).
bool apply(move m, candidate& c, random_engine& rng, const numeric_profile& p, bool canonical);

}  // namespace kvconform::search
