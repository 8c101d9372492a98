// The count of generated cases the gate's progress line shows (docs/design.md §7), across its worker processes.
#pragma once

#include <cstdint>

namespace kvconform {

/// Counts one case run to its end (the generators call it once per case, never for shrinking). Lock-free: a
/// relaxed increment.
void count_case() noexcept;
/// The cases counted so far, in this process and, once share_case_count() has run, in its forked children.
std::uint64_t cases_counted() noexcept;
/// Moves the count into memory shared with the processes this one forks from now on (the gate's workers,
/// properties/runners/parallel.h), so that their cases count here too. Keeps the process's own count when no
/// shared memory can be had (the progress line then counts the cases of this process only).
void share_case_count() noexcept;

}  // namespace kvconform
