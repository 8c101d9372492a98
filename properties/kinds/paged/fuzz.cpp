// The paged kind's fuzz strategy: sequences created, forked and released from the live set, appends at block edges.
#include <algorithm>

#include "oracle/models/paged_model.h"
#include "properties/generate/block_pool_fuzz.h"
#include "properties/kinds/paged/parts.h"

namespace kvconform::kinds {

namespace {
class paged_fuzz final : public block_pool_fuzz<paged_model> {
 public:
  using block_pool_fuzz::block_pool_fuzz;

 private:
  /// A live sequence, or one time in eight the next handle, never issued (an index refusal).
  bool name_sequence(op& o, int which, const std::vector<std::int64_t>& live) override {
    const std::int64_t stale = model_.handles();
    const std::int64_t h = live.empty() ? stale : one_of(live);
    if (which == 1 || live.empty()) return o.kind = op_kind::create, false;
    o.seq = io_.range(0, 7, 0) == 0 ? stale : h;
    return true;
  }
  void append(op& o, bool malformed, const std::vector<std::int64_t>& live) override {
    const bool alive = std::find(live.begin(), live.end(), o.seq) != live.end();
    const std::size_t bs = c_.block_size, len = alive ? model_.size(o.seq) : 0;
    const std::size_t room = alive ? model_.room(o.seq) : 1, to_edge = bs - len % bs;
    rows_of(o, static_cast<std::int64_t>(len), pick({1, to_edge, to_edge + 1, bs, room, room + 1, 0}));
    if (malformed) break_shape(o);
  }
};
}  // namespace

void paged_fuzz_config(byte_io& io, cache_config& c) {
  block_pool_fuzz_config(io, c, 12, 4);
  c.preempt = io.range(0, 1, c.preempt);
}

std::unique_ptr<fuzz_ops> paged_fuzz_ops(byte_io& io, const cache_config& c) {
  return std::make_unique<paged_fuzz>(io, c);
}

}  // namespace kvconform::kinds
