// The hybrid kind's fuzz strategy: a layout of every layer type, ops on live sequences, appends at block edges.
#include <algorithm>

#include "oracle/models/hybrid_model.h"
#include "properties/generate/block_pool_fuzz.h"
#include "properties/kinds/hybrid/parts.h"

namespace kvconform::kinds {

namespace {
/// Flavour 1 a create, 2 a fork or a release, 3 a decode of any layer, 4 an append sized to a block edge or the
/// room, or the same steps as a prefill with every layer's queries, 5 a malformed append; each but a create names a
/// live sequence, or one time in eight a stale handle.
class hybrid_fuzz final : public model_fuzz_ops<hybrid_model> {
 public:
  using model_fuzz_ops::model_fuzz_ops;

  op make(int which) override {
    const auto live = model_.live();
    if (which == 1 || live.empty()) {
      // With prefix caching, a live sequence's tokens as the prompt (a hit), or none.
      auto prompt = c_.prefix_caching && !live.empty() ? model_.tokens(live[io_.range(0, live.size() - 1, 0)])
                                                       : std::vector<std::int64_t>{};
      prompt.resize(prompt.size() - std::min<std::size_t>(prompt.size(), io_.range(0, 2 * c_.block_size, 0)));
      return hybrid_create_op(*src_, c_, seed(), std::move(prompt));
    }
    const std::int64_t h = io_.range(0, 7, 0) == 0 ? model_.handles() : live[io_.range(0, live.size() - 1, 0)];
    op o;
    o.seq = h;
    if (which == 2) return o.kind = io_.range(0, 1, 0) ? op_kind::fork : op_kind::release, o;
    if (which == 3) {
      o = decode_op(o);
      o.layer = static_cast<std::int64_t>(io_.range(0, model_.layers(), 0));  // one past the last: refused
      return o;
    }
    const bool alive = std::find(live.begin(), live.end(), h) != live.end();
    const bool prefill = which == 4 && io_.range(0, 1, 0);
    const std::size_t bs = c_.block_size, len = alive ? model_.size(h) : 0;
    const std::size_t room = alive ? model_.room(h, (c_.capacity + 1) * bs, prefill) : 1;
    const std::size_t n = pick({1, bs - len % bs, bs - len % bs + 1, bs, room, room + 1, 0});
    o = hybrid_append_op(*src_, c_, h, static_cast<std::int64_t>(len), n, seed());
    if (which == 5) o.k.shape[0] += 1;  // one writing layer too many, its rows missing: refused for its shape
    if (prefill) {
      o.kind = op_kind::prefill, o.q.shape = {model_.layers(), n, c_.d_k};
      for (std::size_t r = 0; r < model_.layers() * n; ++r)
        o.q.data.insert(o.q.data.end(), src_->query().begin(), src_->query().end());
    }
    return o;
  }
};
}  // namespace

void hybrid_fuzz_config(byte_io& io, cache_config& c) {
  block_pool_fuzz_config(io, c, 12, 4);
  c.layers = io.range(1, 4, c.layers);
  c.window = io.range(0, 8, c.window);
  c.keep = c.window > 0 ? io.range(0, c.window - 1, c.keep) : 0;
  c.global_every = c.window > 0 ? io.range(0, 3, c.global_every) : 0;
  c.shared = io.range(0, c.layers - 1, c.shared);
  c.cross = io.range(0, 6, c.cross);
  c.prefix_caching = io.range(0, 1, c.prefix_caching);
}

std::unique_ptr<fuzz_ops> hybrid_fuzz_ops(byte_io& io, const cache_config& c) {
  return std::make_unique<hybrid_fuzz>(io, c);
}

}  // namespace kvconform::kinds
