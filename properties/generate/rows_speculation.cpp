// The rows kinds' prefill and rollback properties: chunked prefill, prefill as decode steps, speculative rounds.
#include "properties/generate/rows_generators.h"
#include "properties/generate/speculation_properties.h"

namespace kvconform {

void add_speculation_properties(std::vector<property>& ps, cache_kind kind, rows_model::full rule) {
  add_speculation_properties<rows_mix>(
      ps, kind, [rule](rows_mix mix) { return rows_cases(rule, mix); },
      {.chunked = {.append = 2, .empty = 0, .decode = 1, .prefill = 6},
       .steps = {.append = 2, .empty = 0, .decode = 1, .prefill = 6},
       .rounds = {.append = 1, .empty = 0, .decode = 3, .rollback = 2, .round = 6},
       .refused = {.append = 4, .overfill = 1, .empty = 0, .decode = 1, .rollback = 2, .bad_rollback = 5}},
      {.straddles = "the window or the capacity",
       .refused = "of more steps than held, beyond a full window's reserve, or of a negative count"});
}

}  // namespace kvconform
