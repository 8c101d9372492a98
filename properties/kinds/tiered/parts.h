// The parts of the tiered kind that its sources share: its op mix, generators and fuzz strategy.
#pragma once

#include <memory>
#include <vector>

#include "properties/generate/fuzz_ops.h"
#include "properties/generate/property.h"
#include "properties/kinds/prefix/parts.h"

namespace kvconform::kinds {

/// Relative weights of the ops a tiered property draws (0 = never), beside the device pool's (prefix's mix).
struct tiered_mix {
  prefix_mix pool = {.append = 2, .fill = 1, .decode = 2, .create = 1, .reuse = 3, .release = 2};
  int prompt = 4;    ///< an append of the next tokens of a sequence's prompt (what a miss computes)
  int store = 4;     ///< a written tier block of a sequence to host (or disk), now and then one not yet written
  int load = 4;      ///< from host (or disk) into a sequence that holds only its prompt's start
  int complete = 5;  ///< a pending transfer, the newest more often than the oldest
  int fail = 1;
  int evict = 2;  ///< the device's, the host's or the disk's least recently used, one or two
  int put = 2;    ///< a prompt seen before (or fresh tokens) put straight into host or disk
  int stale = 0;  ///< a complete or fail naming no pending transfer, an evict of more than there is
  /// A round trip as one command: computed and stored or put, evicted from the device, created and loaded back,
  /// with an eviction, a put, a failure or an op on the loading sequence around the pending load.
  int round_trip = 3;
  int via_store = 1, via_put = 1;     ///< how a round trip's prompt gets into the tier: computed and stored, or put
  unsigned store_tails = 0x1f;        ///< the store tails a round trip draws (bit i: tail i, round_trip_plan)
  unsigned load_tails = 0x1f;         ///< and the load tails
  int evict_all = 1, evict_last = 1;  ///< whether the device then lets go of all it cached, or of its last block
};

/// The cases of a tiered property drawn from `mix`.
case_generator tiered_cases(tiered_mix mix);
void add_tiered_properties(std::vector<property>& ps);
void tiered_fuzz_config(byte_io& io, cache_config& c);
std::unique_ptr<fuzz_ops> tiered_fuzz_ops(byte_io& io, const cache_config& c);

}  // namespace kvconform::kinds
