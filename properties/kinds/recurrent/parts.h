// The parts of the recurrent kind that its sources share: its op mix, generators and fuzz strategy.
#pragma once

#include <memory>
#include <vector>

#include "properties/generate/fuzz_ops.h"
#include "properties/generate/property.h"

namespace kvconform::kinds {

/// Relative weights of the ops a recurrent property draws (0 = never).
struct recurrent_mix {
  int create = 1;     ///< an empty sequence
  int reuse = 2;      ///< a create with a held chain's or a live sequence's tokens and more, then the rest of them
  int append = 4;     ///< one to three steps
  int cross = 2;      ///< steps up to past the sequence's next block boundary
  int speculate = 3;  ///< a draft round: the next step and k drafts, then a rollback of the rejected ones
  int rollback = 1;   ///< a rollback of some of the last append's steps
  int fork = 1;
  int release = 1;
  int evict = 1;
  int bad = 0;  ///< a malformed append, a rollback past the last append, an op on a released sequence
  /// A round trip as one command: a prompt of a block or more computed and released, then created again (its
  /// checkpoint resumed) and continued.
  int round_trip = 0;
  /// With attention layers: a held prompt resumed, evictions until its first block's checkpoint is gone while the
  /// block stays, and that block's prompt created again (properties/kinds/recurrent/generators.cpp).
  int short_of_state = 0;
  bool long_appends = false;  ///< appends of up to 4 blocks (chunked kernels over several chunks)
  bool attention = false;     ///< configs with attention layers beside the recurrent one, always
};

/// The cases of a recurrent property drawn from `mix`.
case_generator recurrent_cases(recurrent_mix mix);
void add_recurrent_properties(std::vector<property>& ps);
void recurrent_fuzz_config(byte_io& io, cache_config& c);
std::unique_ptr<fuzz_ops> recurrent_fuzz_ops(byte_io& io, const cache_config& c);
/// An append of n steps of seq with inputs drawn from `seed` in regime `regime` (0 to 3, docs/kinds/recurrent.md) and
/// the given tokens (n of them).
op recurrent_append(const cache_config& c, std::int64_t seq, std::vector<std::int64_t> tokens, std::uint64_t seed,
                    int regime);

}  // namespace kvconform::kinds
