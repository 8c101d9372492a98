// Mutants of prefill and rollback (docs/mutants.md): a bonus step one slot off, a shifted second rollback, a chunk
// offset.
#pragma once

#include <algorithm>

#include "impls/flat/flat.h"

namespace kvconform::mutants {

/// flat-bonus-slot-off (vLLM #9730): after a rollback that rejected drafts, the next append (the bonus step) writes
/// its first row over the last accepted one, one slot early.
struct flat_bonus_slot_off : flat {
  using flat::flat;
  void rollback(std::size_t n) { flat::rollback(n), shifted_ = n > 0 && len_ > 0; }
  void append(array_view k, array_view v) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v());
    if (!shifted_ || steps == 0) return flat::append(k, v);
    if (len_ + steps > max_len()) throw capacity_error("append: cache full");
    for (std::size_t i = 0; i < steps; ++i) write_row(len_ - 1 + i, k.data + i * d_k(), v.data + i * d_v());
    len_ += steps, shifted_ = false;
  }

 private:
  bool shifted_ = false;
};

/// flat-rollback-shifted (llama.cpp #22746): a rollback right after another restores a length shifted by the first
/// one's count, so the rows it dropped come back.
struct flat_rollback_shifted : flat {
  using flat::flat;
  void append(array_view k, array_view v) { flat::append(k, v), last_ = 0; }
  void rollback(std::size_t n) {
    flat::rollback(n);
    len_ = std::min(len_ + last_, max_len());
    last_ = n;
  }

 private:
  std::size_t last_ = 0;  // the count of the rollback just before, if the last change was one
};

/// flat-chunk-offset (vLLM #26042): a prefill's causal mask counts from the chunk's first step as if it began the
/// sequence, so a chunk after the first sees only its own rows.
struct chunk_offset_rules : flat_rules {
  static bool sees(std::size_t before, std::size_t query, std::size_t row) {
    return row >= before && row - before <= query;
  }
};
using flat_chunk_offset = basic_flat<chunk_offset_rules>;

}  // namespace kvconform::mutants
