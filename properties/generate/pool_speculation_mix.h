// The weights of the speculation ops a block-pool property draws (properties/generate/pool_speculation.h).
#pragma once

namespace kvconform {

/// Relative weights of the speculation ops a pool property draws (0 = never).
struct pool_speculation_mix {
  int prefill = 0;       ///< 1 step, to the end of the last block and one more (straddling), or up to a block and more
  int rollback = 0;      ///< none, one, the drafts just verified, back across a block boundary, or every step
  int bad_rollback = 0;  ///< one step more than held, a negative count, an unissued handle's (rollback or prefill)
  int round = 0;         ///< a speculative round: prefill k drafts, roll back k - j (in one or two), append the bonus
  /// Rows to a block's end, a rollback into that block (registered where the kind registers full blocks), an append.
  int block_rollback = 0;
  /// An append, a fork, a rollback of one of the two into the block they share, an append to it.
  int shared_rollback = 0;
};

}  // namespace kvconform
