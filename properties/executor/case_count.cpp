// The case count: a process-wide atomic, moved into an anonymous shared mapping for the gate's workers.
#include "properties/executor/case_count.h"

#include <sys/mman.h>

#include <atomic>
#include <new>

namespace kvconform {

namespace {
using counter = std::atomic<std::uint64_t>;
static_assert(counter::is_always_lock_free, "a counter in shared memory must not hide a lock");
counter own{0};
std::atomic<counter*> current{&own};
}  // namespace

void count_case() noexcept { current.load(std::memory_order_relaxed)->fetch_add(1, std::memory_order_relaxed); }

std::uint64_t cases_counted() noexcept {
  return current.load(std::memory_order_relaxed)->load(std::memory_order_relaxed);
}

void share_case_count() noexcept {
  if (current.load() != &own) return;  // shared already
  void* page = ::mmap(nullptr, sizeof(counter), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return;
  current.store(new (page) counter(own.load()));  // never unmapped: the workers may count until they exit
}

}  // namespace kvconform
