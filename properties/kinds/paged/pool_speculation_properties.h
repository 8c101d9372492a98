// The prefill and rollback properties of the block pools without preemption (paged, latent), with their mixes.
#pragma once

#include <vector>

#include "properties/generate/speculation_properties.h"
#include "properties/kinds/paged/parts.h"

namespace kvconform::kinds {

/// prefill_chunked_equals_whole, prefill_equals_decode_steps, speculative_rounds and refused_rollback_unchanged for
/// `kind`, each drawing `cases` of its mix. Without preemption or releases a prefill's chunks fit wherever the whole
/// one does (docs/kinds/paged.md).
inline void add_pool_speculation_properties(std::vector<property>& ps, cache_kind kind,
                                            case_generator (*cases)(paged_mix)) {
  add_speculation_properties<paged_mix>(
      ps, kind, cases,
      {.chunked = {.append = 2, .decode = 1, .fork = 1, .release = 0, .speculation = {.prefill = 6}},
       .steps = {.append = 2, .decode = 1, .fork = 1, .release = 0, .speculation = {.prefill = 6}},
       .rounds = {.append = 1, .decode = 2, .fork = 1, .speculation = {.rollback = 2, .round = 6, .block_rollback = 1}},
       .refused = {.append = 4, .decode = 1, .fork = 1, .speculation = {.rollback = 2, .bad_rollback = 5}}},
      {.straddles = "block boundaries",
       .refused = "of more steps than a sequence holds, of a negative count or of a released sequence"});
}

}  // namespace kvconform::kinds
