// The parts of the paged kind that its sources share: its op mix, generators and fuzz strategy.
#pragma once

#include <memory>
#include <vector>

#include "properties/generate/fuzz_ops.h"
#include "properties/generate/pool_speculation_mix.h"
#include "properties/generate/property.h"

namespace kvconform::kinds {

/// Relative weights of the ops a paged property draws (0 = never).
struct paged_mix {
  int append = 6;     ///< n rows, capped at what fits
  int fill = 0;       ///< the pool's last free slot, or exactly to the end of the sequence's block
  int overfill = 0;   ///< the room plus 1 to 3 rows
  int empty = 1;      ///< a 2-D append of 0 steps
  int bad_shape = 0;  ///< wrong width, wrong rank, or k and v differing in steps
  int decode = 2;
  int bad_decode = 0;  ///< q of the wrong width or rank, or a decode of an empty sequence
  int create = 1;      ///< a new sequence
  int fork = 1;        ///< a fork of a live sequence
  int release = 1;     ///< a release of a live sequence
  int stale = 0;       ///< an append, decode, fork or release naming a released or never-issued handle
  /// Long cases draw pools of more than 2^16 one-row blocks (shapes.h); each costs a comparison of
  /// as many blocks after every op, so one property does.
  bool huge_pools = false;
  pool_speculation_mix speculation = {};  ///< prefills, rollbacks and speculative rounds (behind their capabilities)
};

/// Whether the long cases of `mix` on `impl` draw huge pools: not for a cache whose storage rounds (its
/// format is orthogonal to block numbers, which the double reference covers, and its checks of 2^16 rows
/// cost three times as much); the coverage event "pool past 2^16 blocks" follows.
bool huge_pools(const paged_mix& mix, const implementation& impl);
/// The cases of a paged property drawn from `mix` (with the preempt policy when it needs it).
case_generator paged_cases(paged_mix mix);
void add_paged_properties(std::vector<property>& ps);
void paged_fuzz_config(byte_io& io, cache_config& c);
std::unique_ptr<fuzz_ops> paged_fuzz_ops(byte_io& io, const cache_config& c);

}  // namespace kvconform::kinds
