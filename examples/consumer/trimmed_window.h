// acme's sliding window with rollback as mlx-lm's RotatingKVCache trims: only while it has held fewer than W steps.
#pragma once

#include <cstddef>

#include "window_cache.h"

namespace acme {

/// window_cache with rollback(n) for speculative decoding: until the window has filled nothing was overwritten, so
/// the newest n steps just go; once it has held W steps, a rollback is refused (mlx-lm's is_trimmable(): offset <
/// max_size). A choice the ring kind's contract makes otherwise (a reserve kept for rollbacks), so acme declares it;
/// declaring it is also what spares it a reserve it does not keep (a ring with rollback takes one otherwise).
class trimmed_window_cache : public window_cache {
 public:
  static constexpr kvconform::policy policies[] = {{"rollback", "before_full"}};
  using window_cache::window_cache;

  void rollback(std::size_t n) {
    if (total() >= static_cast<std::int64_t>(window())) throw kvconform::index_error("rollback: the window has filled");
    if (n > static_cast<std::size_t>(total())) throw kvconform::index_error("rollback: fewer steps appended");
    drop_newest(n);
  }
};

}  // namespace acme
