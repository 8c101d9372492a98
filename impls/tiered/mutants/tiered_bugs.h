// The tiered mutants: each the reference with one rule broken the way an engine's report shows (docs/mutants.md).
#pragma once

#include "impls/tiered/tiered.h"

namespace kvconform::mutants {

/// vLLM #45704 (PR #46278; #31341 in the other connector): the store starts before the rows are written.
struct tiered_store_unwritten_rules : tiered_rules {
  static constexpr bool store_written_only = false;
};
/// vLLM #46951: a pending store's source blocks go back to the pool when their sequence lets go of them.
struct tiered_reuse_pending_source_rules : tiered_rules {
  static constexpr bool hold_store_sources = false;
};
/// SGLang PR #27444 (bytedance-iaas/sglang PR #638): load_back pins nothing on host, so eviction takes its source.
struct tiered_load_source_unpinned_rules : tiered_rules {
  static constexpr bool pin_load_sources = false;
};
/// SGLang PRs #27631, #31427: the eviction that makes room inside a load frees host pages a load is restoring.
struct tiered_room_ignores_pins_rules : tiered_rules {
  static constexpr bool room_respects_pins = false;
};
/// LMCache #4463: a packed [k v] row read back split at d_v instead of d_k (exact when d_k = d_v).
struct tiered_packed_split_rules : tiered_rules {
  static std::size_t key_width(std::size_t d_k, std::size_t d_v) {
    (void)d_k;
    return d_v;
  }
};
/// TensorRT-LLM #6507: the tier block read back row-interleaved, written block-major (exact when either is 1).
struct tiered_layout_transposed_rules : tiered_rules {
  static std::size_t packed_row(std::size_t j, std::size_t r, std::size_t block_size, std::size_t factor) {
    (void)block_size;
    return r * factor + j;
  }
};
/// LMCache #2206: a load whose first tier block straddles the device hit writes the whole tier block.
struct tiered_overlap_device_hit_rules : tiered_rules {
  static constexpr bool load_past_device_hit = false;
};
/// LMCache #4133 (a hit reported, the load never issued): the loading rows are readable at once, stale.
struct tiered_consumed_before_load_rules : tiered_rules {
  static constexpr bool rows_at_completion = false;
};
/// vLLM #49250: a failed load under recompute keeps the length the load would have reached.
struct tiered_fail_keeps_length_rules : tiered_rules {
  static constexpr bool fail_restores_length = false;
};
/// SGLang PR #28468: a store's pending destination counts as evictable.
struct tiered_pending_entry_evictable_rules : tiered_rules {
  static constexpr bool pending_unevictable = false;
};
/// vLLM PR #48102: a failed store keeps its tier slot reserved.
struct tiered_failed_store_leaks_rules : tiered_rules {
  static constexpr bool free_failed_slot = false;
};

using tiered_store_unwritten = basic_tiered<tiered_store_unwritten_rules>;
using tiered_reuse_pending_source = basic_tiered<tiered_reuse_pending_source_rules>;
using tiered_load_source_unpinned = basic_tiered<tiered_load_source_unpinned_rules>;
using tiered_room_ignores_pins = basic_tiered<tiered_room_ignores_pins_rules>;
using tiered_packed_split = basic_tiered<tiered_packed_split_rules>;
using tiered_layout_transposed = basic_tiered<tiered_layout_transposed_rules>;
using tiered_overlap_device_hit = basic_tiered<tiered_overlap_device_hit_rules>;
using tiered_consumed_before_load = basic_tiered<tiered_consumed_before_load_rules>;
using tiered_fail_keeps_length = basic_tiered<tiered_fail_keeps_length_rules>;
using tiered_pending_entry_evictable = basic_tiered<tiered_pending_entry_evictable_rules>;
using tiered_failed_store_leaks = basic_tiered<tiered_failed_store_leaks_rules>;

}  // namespace kvconform::mutants
