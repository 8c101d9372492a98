// The paged properties: what traces each generates; the executor's snapshot diff judges every op.
#include "properties/generate/statements.h"
#include "properties/kinds/paged/kind.h"

namespace kvconform::kinds {

// Block accounting, sharing and reference counts are compared with the model after every op
// (trace.h, diff), and preemption victims with the model's (executor); so each property here
// is a choice of traces that drives the cache into the situation it names.
void add_paged_properties(std::vector<property>& ps) {
  constexpr cache_kind paged = cache_kind::paged;
  auto add = [&](const statement& s, paged_mix mix) -> property& {
    property& p = add_property(ps, paged, s);
    p.generate = paged_cases(mix);
    return p;
  };
  namespace st = statements;
  add(st::refused_unchanged,
      {.append = 3, .fill = 2, .overfill = 3, .empty = 1, .bad_shape = 4, .decode = 1, .bad_decode = 2, .stale = 2});
  add(st::copy_semantics, {.append = 6, .fill = 1, .empty = 1, .decode = 3});
  add(st::views_filled_rows, {.append = 5, .fill = 1, .empty = 2, .decode = 4});
  add(st::one_d_equals_one_row, {.append = 6, .fill = 1, .empty = 1, .decode = 1}).rewrite = one_d_as_one_row;
  add(st::order_preserved, {.append = 8, .fill = 1, .empty = 1, .decode = 1});
  add(st::large_scores, {.append = 4, .fill = 1, .decode = 4});
  add(st::decode_within_bound, {.append = 4, .fill = 1, .empty = 1, .decode = 4, .bad_decode = 1});

  auto own = [&](const char* name, const char* summary, paged_mix mix) -> property& {
    property& p = add_property(ps, paged, name, summary);
    p.generate = paged_cases(mix);
    return p;
  };
  own("paged_block_accounting",
      "after every op free + in-use = num_blocks and every block's reference count equals the number of tables holding "
      "it "
      "(no leak, no double free)",
      {.append = 4,
       .fill = 2,
       .overfill = 2,
       .empty = 1,
       .decode = 0,
       .create = 2,
       .fork = 3,
       .release = 3,
       .stale = 1})
      .long_traces = true;
  own("paged_sequence_isolation",
      "every sequence's rows equal the model after every op: a write to one never changes another, also after fork",
      {.append = 6, .fill = 1, .decode = 2, .create = 1, .fork = 3, .release = 1});
  own("paged_copy_on_write",
      "an append copies a shared last block exactly when it is partly filled; block tables share exactly what the "
      "model shares",
      {.append = 6, .empty = 1, .decode = 1, .create = 1, .fork = 4, .release = 1});
  own("paged_exact_fill",
      "an append that uses the last free slot of the last free block is accepted; one row more is refused",
      {.append = 2, .fill = 4, .overfill = 3, .decode = 1, .create = 1, .fork = 1, .release = 1});
  own("paged_blocks_reused",
      "released blocks go back to the pool and are handed out again: filling, releasing and refilling never runs short",
      {.append = 3, .fill = 3, .overfill = 1, .decode = 1, .create = 2, .fork = 1, .release = 3})
      .long_traces = true;
  own("paged_preemption",
      "an append that does not fit releases exactly the newest other sequences it needs and leaves the pool "
      "consistent; "
      "if even all of them would not make room, it is refused and releases nothing",
      {.append = 3, .fill = 2, .overfill = 4, .decode = 1, .create = 3, .fork = 2, .release = 1})
      .needs = {capability::preempt};
  own("paged_memory_in_use",
      "bytes in use equal in-use blocks x block bytes after every op: nothing is reserved per sequence or per maximum "
      "length",
      {.append = 3, .empty = 1, .decode = 0, .create = 4, .fork = 2, .release = 2});
}

}  // namespace kvconform::kinds
