// The prefill and rollback properties the rows and block-pool kinds share, each drawn from the kind's own mix.
#pragma once

#include <string>
#include <vector>

#include "properties/generate/prefill_rewrites.h"
#include "properties/generate/statements.h"

namespace kvconform {

/// The kind's mixes for the four shared properties (docs/design.md §2.3).
template <class Mix>
struct speculation_mixes {
  Mix chunked, steps, rounds, refused;
};

/// What the summaries say of the kind: what chunks straddle, which rollbacks it refuses.
struct speculation_wording {
  const char* straddles;
  const char* refused;
};

/// Appends prefill_chunked_equals_whole, prefill_equals_decode_steps, speculative_rounds and
/// refused_rollback_unchanged; `cases` turns a mix into the kind's generator.
template <class Mix, class Cases>
void add_speculation_properties(std::vector<property>& ps, cache_kind kind, Cases cases,
                                const speculation_mixes<Mix>& mix, const speculation_wording& says) {
  add_property(ps, kind, "prefill_chunked_equals_whole",
               std::string("a prefill in chunks (of 1, of primes, straddling ") + says.straddles +
                   ") leaves the state of the whole prefill at once, every query's output and weights within the bound",
               cases(mix.chunked), {capability::prefill})
      .rewrite = prefill_as_chunks;
  add_property(ps, kind, "prefill_equals_decode_steps",
               "a prefill leaves the state of appending its steps one by one, each decoded with its own query, and its "
               "causal outputs lie within the bound",
               cases(mix.steps), {capability::prefill, capability::decode})
      .rewrite = prefill_as_steps;
  add_property(ps, kind, "speculative_rounds",
               "speculative rounds (prefill k drafts, accept j of them with 0 and k included, roll back k - j, append "
               "the bonus; rollbacks in a row) leave the state of a cache that only saw the accepted steps",
               cases(mix.rounds), {capability::prefill, capability::rollback});
  add_property(ps, kind, "refused_rollback_unchanged",
               std::string("a rollback ") + says.refused + " is refused with `index` and changes nothing",
               cases(mix.refused), {capability::rollback});
}

}  // namespace kvconform
