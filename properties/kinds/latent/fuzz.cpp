// The latent kind's fuzz strategy: the pool's sequences and block edges as paged's, rows without v, per-head decodes.
#include <algorithm>

#include "oracle/models/latent_model.h"
#include "oracle/numeric/storage_format.h"
#include "properties/generate/block_pool_fuzz.h"
#include "properties/kinds/latent/parts.h"

namespace kvconform::kinds {

namespace {
/// Flavour 1 a create, 2 a fork, a release or a rollback, 3 a decode, 4 an append or a prefill, 5 a malformed append;
/// each but a create names a live sequence, or one time in eight the next handle (an index refusal).
class latent_fuzz final : public model_fuzz_ops<latent_model> {
 public:
  using model_fuzz_ops::model_fuzz_ops;

  op make(int which) override {
    op o;
    const std::vector<std::int64_t> live = model_.live();
    if (which == 1 || live.empty()) return o.kind = op_kind::create, o;
    o.seq = io_.range(0, 7, 0) == 0 ? model_.handles() : live[io_.range(0, live.size() - 1, 0)];
    const bool alive = std::find(live.begin(), live.end(), o.seq) != live.end();
    const std::size_t bs = c_.block_size, len = alive ? model_.size(o.seq) : 0;
    // A non-owning handle on the class's rows for the shared builders.
    const op_target t{std::shared_ptr<const row_source>(std::shared_ptr<void>(), src_.get()),
                      static_cast<std::int64_t>(len), o.seq};
    if (which == 2) {
      const std::uint64_t r = io_.range(0, 2, 0);
      if (r < 2) return o.kind = r ? op_kind::fork : op_kind::release, o;
      return rollback_op(t, static_cast<std::int64_t>(pick({0, 1, len % bs + 1, len, len + 1})));
    }
    if (which == 3) return latent_decode_op(t, io_.range(0, 3, 0) == 0, static_cast<int>(io_.range(0, 1, 0)), seed());
    if (which == 5) return latent_bad_shape_op(t, static_cast<int>(io_.range(0, 5, 0)), seed());
    const std::size_t room = alive ? model_.room(o.seq) : 1, to_edge = bs - len % bs;
    op a = latent_append_op(t, pick({1, to_edge, to_edge + 1, bs, room, room + 1, 0}),
                            static_cast<int>(io_.range(0, 1, 0)), seed());
    return io_.range(0, 1, 0) ? latent_prefill_op(std::move(a), t.src) : a;
  }
};
}  // namespace

void latent_fuzz_config(byte_io& io, cache_config& c) {
  const std::size_t d_c = c.d_v, d_r = c.d_k > c.d_v ? c.d_k - c.d_v : 1;  // the writer's config, before the clamps
  block_pool_fuzz_config(io, c, 12, 4);
  // A rotary part of 1 to 4 on the drawn d_c, or (5 to 8) on a d_c of one whole int8 group: the narrowest rows the
  // q8_0 reference takes (docs/kinds/latent.md, Formats), above the fuzz sizes. One byte either way, so inputs written
  // for 1 to 4 read the same.
  const std::size_t group = formats::q8_0.group;
  const std::uint64_t r = io.range(1, 8, d_c == group ? d_r + 4 : d_r);
  if (r > 4) c.d_v = group;
  c.d_k = c.d_v + (r > 4 ? r - 4 : r);
  c.v_scale = c.k_scale;  // one scale: the values are the rows'
}

std::unique_ptr<fuzz_ops> latent_fuzz_ops(byte_io& io, const cache_config& c) {
  return std::make_unique<latent_fuzz>(io, c, policy_set{},
                                       false);  // the model follows the state: its problems are not needed
}

}  // namespace kvconform::kinds
