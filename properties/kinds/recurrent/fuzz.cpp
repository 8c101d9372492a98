// The recurrent kind's fuzz strategy: draft rounds, block edges and prefixes resumed, with malformed steps.
#include <algorithm>

#include "oracle/models/recurrent_model.h"
#include "properties/kinds/recurrent/parts.h"

namespace kvconform::kinds {

namespace {
/// Flavour 1 a create (empty, or a held chain's or a live sequence's tokens), 2 a fork, a release or a rollback, 3 an
/// evict, 4 an append up to or past a block edge, 5 a malformed append (attention rows included); each op on a sequence
/// names a live one, or one time in eight the next handle (an index refusal).
class recurrent_fuzz final : public model_fuzz_ops<recurrent_model> {
 public:
  using model_fuzz_ops::model_fuzz_ops;

  op make(int which) override {
    op o;
    const std::vector<std::int64_t> live = model_.live();
    const int regime = static_cast<int>(src_->kind()) % 4;
    if (which == 1 || live.empty()) {
      o.kind = op_kind::create;
      std::vector<std::vector<std::int64_t>> from = model_.chains();
      for (std::int64_t h : live) from.push_back(model_.tokens(h));
      if (!from.empty() && io_.range(0, 1, 0)) o.tokens = from[io_.range(0, from.size() - 1, 0)];
      return o;
    }
    if (which == 3) return o.kind = op_kind::evict, o.count = static_cast<std::int64_t>(io_.range(0, 3, 0)), o;
    o.seq =
        io_.range(0, 7, 0) == 0 ? static_cast<std::int64_t>(model_.handles()) : live[io_.range(0, live.size() - 1, 0)];
    const bool alive = std::find(live.begin(), live.end(), o.seq) != live.end();
    const std::size_t bs = c_.block_size, len = alive ? model_.length(o.seq) : 0,
                      drop = alive ? model_.droppable(o.seq) : 0;
    if (which == 2) {
      const std::uint64_t r = io_.range(0, 2, 0);
      if (r < 2) return o.kind = r ? op_kind::fork : op_kind::release, o;
      o.kind = op_kind::rollback, o.count = static_cast<std::int64_t>(pick({0, 1, drop, drop + 1}));
      return o;
    }
    const std::size_t to_edge = bs - len % bs, n = pick({1, to_edge, to_edge + 1, bs + 2, 0});
    std::vector<std::int64_t> tokens(n);
    for (auto& t : tokens) t = static_cast<std::int64_t>(io_.range(0, 3, 0));
    op a = recurrent_append(c_, o.seq, std::move(tokens), seed(), regime);
    if (which == 5) {
      switch (io_.range(0, 4, 0)) {
        case 0: a.x.shape.push_back(1); break;                    // one rank more
        case 4: a.v.shape.push_back(1); break;                    // attention rows of one rank more
        case 1: a.g.data.push_back(0), a.g.shape[0] += 1; break;  // a decay too many
        case 2: a.g.data.assign(a.g.data.size(), 1.0); break;     // growing decays
        default: a.tokens.push_back(0); break;                    // a token too many
      }
    }
    return a;
  }
};
}  // namespace

void recurrent_fuzz_config(byte_io& io, cache_config& c) {
  c.capacity = io.range(1, 8, c.capacity);
  c.block_size = io.range(1, 4, c.block_size);
  c.d_k = io.range(1, 8, c.d_k);
  c.d_v = io.range(1, 8, c.d_v);
  c.conv_width = io.range(1, 4, c.conv_width);
  c.delta = io.range(0, 1, c.delta) == 1;
  c.layers = io.range(0, 2, c.layers);
}

std::unique_ptr<fuzz_ops> recurrent_fuzz_ops(byte_io& io, const cache_config& c) {
  return std::make_unique<recurrent_fuzz>(io, c, policy_set{}, false);  // the model follows the structure only
}

}  // namespace kvconform::kinds
