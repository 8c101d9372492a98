// The rules of the reference tiered cache: prefix's, its policies, and the points its mutants break.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <kvconform/array_view.h>

#include "impls/prefix/prefix.h"

namespace kvconform {

/// The tiered rules: prefix's, the tiered policies, and the points bugs get wrong (impls/tiered/mutants/).
struct tiered_rules : prefix_rules {
  // The policies (docs/kinds/tiered.md "Policies").
  static constexpr bool fifo = false;           ///< completion_order=fifo
  static constexpr bool abort_on_fail = false;  ///< load_failure=abort
  static constexpr bool device_absent = false;  ///< host_eviction=device_absent
  /// Whether a store waits for its rows: refused while the tier block is not wholly written.
  static constexpr bool store_written_only = true;
  /// Whether a pending host store holds its source blocks like a table until it ends.
  static constexpr bool hold_store_sources = true;
  /// Whether a load pins the tier entries it reads until it ends.
  static constexpr bool pin_load_sources = true;
  /// Whether making room in a tier (for a store, a load or a put) skips the entries loads are reading.
  static constexpr bool room_respects_pins = true;
  /// Whether a pending entry (a store's destination) is kept out of eviction.
  static constexpr bool pending_unevictable = true;
  /// Whether a failed store gives its slot back.
  static constexpr bool free_failed_slot = true;
  /// Whether a load skips the device blocks of its first tier block that the sequence holds already.
  static constexpr bool load_past_device_hit = true;
  /// Whether a loading sequence's rows wait for the completion (else: readable at once, stale).
  static constexpr bool rows_at_completion = true;
  /// Whether a failed load leaves the sequence's length where it was before the load.
  static constexpr bool fail_restores_length = true;
  /// A tier block packs row r of device block j at packed row j * block_size + r, each as k then v (its own layout);
  /// these read it back. A mutant reads another layout.
  static std::size_t packed_row(std::size_t j, std::size_t r, std::size_t block_size, std::size_t factor) {
    (void)factor;
    return j * block_size + r;
  }
  static std::size_t key_width(std::size_t d_k, std::size_t d_v) {
    (void)d_v;
    return d_k;
  }
};

/// The hash chain of the first `limit` tokens of `tokens`, one hash per full block of `block_size`.
template <class Rules>
std::vector<std::uint64_t> hash_chain(const std::vector<std::int64_t>& tokens, std::size_t limit,
                                      std::size_t block_size) {
  std::vector<std::uint64_t> out;
  for (std::size_t at = 0; at + block_size <= limit; at += block_size)
    out.push_back(
        Rules::block_hash(out.empty() ? 0 : out.back(), std::span<const std::int64_t>(tokens).subspan(at, block_size)));
  return out;
}
/// The key a store of a tier block whose rows are not all written files it under (a mutant's): the chain of the
/// tokens there are, after the sequence's full blocks' `hashes`.
template <class Rules>
std::uint64_t partial_key(const std::vector<std::uint64_t>& hashes, const std::vector<std::int64_t>& tokens,
                          std::size_t block_size) {
  return Rules::block_hash(hashes.empty() ? 0 : hashes.back(),
                           std::span<const std::int64_t>(tokens).subspan(hashes.size() * block_size));
}

/// `a` as a reference whose rules declare an element storage format (impls/common/formats.h) stores side `side` (0
/// keys, 1 values) with per-tensor scale `scale`: a rounded copy in `buf`. `a` itself for a double reference.
template <class Rules>
array_view as_stored(array_view a, int side, double scale, std::vector<double>& buf) {
  if constexpr (requires { typename Rules::storage; }) {
    using storage = typename Rules::storage;
    const storage_format& f = side == 0 ? storage::keys : storage::values;
    buf.assign(a.data, a.data + a.size());
    for (double& x : buf) x = storage::rules::store_scaled(f, x, scale);
    a.data = buf.data();
  }
  return a;
}

}  // namespace kvconform
