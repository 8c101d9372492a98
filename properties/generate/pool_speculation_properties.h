// The prefill and rollback properties every block-pool kind shares, each drawn from the kind's own mix.
#pragma once

#include <vector>

#include "properties/generate/prefill_rewrites.h"
#include "properties/generate/property.h"
#include "properties/generate/statements.h"

namespace kvconform {

/// The kind's mixes for the four shared properties (docs/design.md §2.3).
template <class Mix>
struct pool_speculation_mixes {
  Mix chunked, steps, rounds, refused;
};

template <class Mix>
void add_pool_speculation_properties(std::vector<property>& ps, cache_kind kind, case_generator (*cases)(Mix),
                                     const pool_speculation_mixes<Mix>& mix) {
  auto add = [&](const char* name, const char* summary, const Mix& m, capability_set needs) -> property& {
    property& p = add_property(ps, kind, name, summary);
    p.generate = cases(m);
    p.needs = needs;
    return p;
  };
  add("prefill_chunked_equals_whole",
      "a prefill in chunks (of 1, of primes, straddling block boundaries) leaves the state of the whole prefill at "
      "once, every query's output and weights within the bound",
      mix.chunked, {capability::prefill})
      .rewrite = prefill_as_chunks;
  add("prefill_equals_decode_steps",
      "a prefill leaves the state of appending its steps one by one, each decoded with its own query, and its "
      "causal outputs lie within the bound",
      mix.steps, {capability::prefill, capability::decode})
      .rewrite = prefill_as_steps;
  add("speculative_rounds",
      "speculative rounds (prefill k drafts, accept j of them with 0 and k included, roll back k - j, append the "
      "bonus; rollbacks in a row) leave rows, block tables and counts of a cache that only saw the accepted steps",
      mix.rounds, {capability::prefill, capability::rollback});
  add("refused_rollback_unchanged",
      "a rollback of more steps than a sequence holds, of a negative count or of a released sequence is refused with "
      "`index` and changes nothing",
      mix.refused, {capability::rollback});
}

}  // namespace kvconform
