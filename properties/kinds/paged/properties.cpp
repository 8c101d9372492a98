// The paged properties: what traces each generates; the executor's snapshot diff judges every op.
#include "properties/generate/property.h"

namespace kvconform {

// Block accounting, sharing and reference counts are compared with the model after every op
// (trace.h, diff), and preemption victims with the model's (executor); so each property here
// is a choice of traces that drives the cache into the situation it names.
void add_paged_properties(std::vector<property>& ps) {
  constexpr cache_kind paged_only[] = {cache_kind::paged};
  auto add = [&](std::string name, std::string summary) -> property& {
    return add_property(ps, std::move(name), std::move(summary), paged_only);
  };

  auto& accounting = add("paged_block_accounting",
                         "after every op free + in-use = num_blocks and every block's reference count equals the number of tables holding it (no leak, no double free)");
  accounting.mix = {.append = 4, .fill = 2, .overfill = 2, .empty = 1, .decode = 0, .create = 2, .fork = 3, .release = 3, .stale = 1};
  accounting.long_traces = true;

  add("paged_sequence_isolation", "every sequence's rows equal the model after every op: a write to one never changes another, also after fork")
      .mix = {.append = 6, .fill = 1, .decode = 2, .create = 1, .fork = 3, .release = 1};

  add("paged_copy_on_write", "an append copies a shared last block exactly when it is partly filled; block tables share exactly what the model shares")
      .mix = {.append = 6, .empty = 1, .decode = 1, .create = 1, .fork = 4, .release = 1};

  add("paged_exact_fill", "an append that uses the last free slot of the last free block is accepted; one row more is refused")
      .mix = {.append = 2, .fill = 4, .overfill = 3, .decode = 1, .create = 1, .fork = 1, .release = 1};

  auto& reuse = add("paged_blocks_reused", "released blocks go back to the pool and are handed out again: filling, releasing and refilling never runs short");
  reuse.mix = {.append = 3, .fill = 3, .overfill = 1, .decode = 1, .create = 2, .fork = 1, .release = 3};
  reuse.long_traces = true;

  auto& preempt = add("paged_preemption",
                      "an append that does not fit releases exactly the newest other sequences it needs and leaves the pool consistent; "
                      "if even all of them would not make room, it is refused and releases nothing");
  preempt.needs = {"preempt"};
  preempt.mix = {.append = 3, .fill = 2, .overfill = 4, .decode = 1, .create = 3, .fork = 2, .release = 1};

  add("paged_memory_in_use", "bytes in use equal in-use blocks x block bytes after every op: nothing is reserved per sequence or per maximum length")
      .mix = {.append = 3, .empty = 1, .decode = 0, .create = 4, .fork = 2, .release = 2};
}

}  // namespace kvconform
