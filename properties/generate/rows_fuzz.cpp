// The rows family's fuzz strategy (flat, ring, growing): appends and prefills around the capacity or window, rollbacks.
#include "properties/generate/fuzz_ops.h"
#include "properties/generate/rows_generators.h"

namespace kvconform {

namespace {
class rows_fuzz final : public model_fuzz_ops<rows_model> {
 public:
  using model_fuzz_ops::model_fuzz_ops;
  op make(int which) override {
    if (which == 1) return decode_op();
    op o;
    const std::size_t cap = c_.capacity, held = model_.size(), room = cap > held ? cap - held : 0;
    if (which == 5) {  // a rollback of none, one, the drafts just verified, every row, one more, the reserve
      o.kind = op_kind::rollback;
      o.count = static_cast<std::int64_t>(pick({0, 1, model_.drafts(), held, held + 1, c_.reserve}));
      return o;
    }
    const std::size_t n = pick({1, 2, room, room + 1, cap - 1, cap, cap + 1, 2 * cap + 1, 0});
    rows_of(o, model_.total(), n);
    if (which == 2) break_shape(o);
    if (which == 4) as_prefill(o);
    return o;
  }
};
}  // namespace

std::unique_ptr<fuzz_ops> rows_fuzz_ops(byte_io& io, const cache_config& c, rows_model::full rule) {
  return std::make_unique<rows_fuzz>(io, c, rule);
}

}  // namespace kvconform
