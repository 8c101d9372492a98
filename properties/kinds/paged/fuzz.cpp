// The paged kind's fuzz strategy: sequences created, forked and released from the live set, appends at block edges.
#include <algorithm>

#include "oracle/models/paged_model.h"
#include "properties/kinds/paged/parts.h"

namespace kvconform::kinds {

namespace {
class paged_fuzz final : public model_fuzz_ops<paged_model> {
 public:
  using model_fuzz_ops::model_fuzz_ops;

  op make(int which) override {
    op o;
    const std::vector<std::int64_t> live = model_.live();
    const std::int64_t stale = model_.handles();  // never issued: an index refusal
    const std::int64_t h = live.empty() ? stale : live[io_.range(0, live.size() - 1, 0)];
    if (which == 1 || live.empty()) return o.kind = op_kind::create, o;
    o.seq = io_.range(0, 7, 0) == 0 ? stale : h;
    if (which == 2) return o.kind = io_.range(0, 1, 0) ? op_kind::fork : op_kind::release, o;
    if (which == 3) return decode_op(o);
    const bool alive = std::find(live.begin(), live.end(), o.seq) != live.end();
    const std::size_t bs = c_.block_size, len = alive ? model_.size(o.seq) : 0;
    const std::size_t room = alive ? model_.room(o.seq) : 1, to_edge = bs - len % bs;
    rows_of(o, static_cast<std::int64_t>(len), pick({1, to_edge, to_edge + 1, bs, room, room + 1, 0}));
    if (which == 5) break_shape(o);
    return o;
  }
};
}  // namespace

void paged_fuzz_config(byte_io& io, cache_config& c) {
  fuzz_sizes(io, c);
  c.capacity = std::min<std::size_t>(c.capacity, 12);  // blocks: enough to exhaust and reuse
  c.block_size = io.range(1, 4, c.block_size);
  c.preempt = io.range(0, 1, c.preempt);
}

std::unique_ptr<fuzz_ops> paged_fuzz_ops(byte_io& io, const cache_config& c) {
  return std::make_unique<paged_fuzz>(io, c);
}

}  // namespace kvconform::kinds
