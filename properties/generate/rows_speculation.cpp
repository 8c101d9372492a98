// The rows kinds' prefill and rollback properties: chunked prefill, prefill as decode steps, speculative rounds.
#include "properties/generate/prefill_rewrites.h"
#include "properties/generate/rows_generators.h"
#include "properties/generate/statements.h"

namespace kvconform {

void add_speculation_properties(std::vector<property>& ps, cache_kind kind, rows_model::full rule) {
  auto add = [&](const char* name, const char* summary, rows_mix mix, capability_set needs) -> property& {
    property& p = add_property(ps, kind, name, summary);
    p.generate = rows_cases(rule, mix);
    p.needs = needs;
    return p;
  };
  add("prefill_chunked_equals_whole",
      "a prefill in chunks (of 1, of primes, straddling the window or the capacity) leaves the state of the whole "
      "prefill at once, every query's output and weights within the bound",
      {.append = 2, .empty = 0, .decode = 1, .prefill = 6}, {capability::prefill})
      .rewrite = prefill_as_chunks;
  add("prefill_equals_decode_steps",
      "a prefill leaves the state of appending its steps one by one, each decoded with its own query, and its "
      "causal outputs lie within the bound",
      {.append = 2, .empty = 0, .decode = 1, .prefill = 6}, {capability::prefill, capability::decode})
      .rewrite = prefill_as_steps;
  add("speculative_rounds",
      "speculative rounds (prefill k drafts, accept j of them with 0 and k included, roll back k - j, append the "
      "bonus; rollbacks in a row) leave the state of a cache that only saw the accepted steps",
      {.append = 1, .empty = 0, .decode = 3, .rollback = 2, .round = 6}, {capability::prefill, capability::rollback});
  add("refused_rollback_unchanged",
      "a rollback of more steps than held, beyond a full window's reserve, or of a negative count is refused with "
      "`index` and changes nothing",
      {.append = 4, .overfill = 1, .empty = 0, .decode = 1, .rollback = 2, .bad_rollback = 5}, {capability::rollback});
}

}  // namespace kvconform
