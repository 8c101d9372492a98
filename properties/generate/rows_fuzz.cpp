// The fuzz strategy of the single-sequence kinds: appends around the capacity or window, decodes, shape errors.
#include "properties/generate/fuzz_ops.h"
#include "properties/generate/rows_generators.h"

namespace kvconform {

namespace {
class rows_fuzz final : public fuzz_ops {
 public:
  rows_fuzz(byte_io& io, const cache_config& c, rows_model::full rule)
      : fuzz_ops(io, c), model_(c, numeric_profile{}, rule) {}

  op make(int which) override {
    op o;
    const std::size_t cap = c_.capacity, held = model_.size(), room = cap > held ? cap - held : 0;
    if (which == 1) return o.kind = op_kind::decode, o.q = tensor::vector(src_->query()), o;
    rows_of(o, model_.total(), pick({1, 2, room, room + 1, cap - 1, cap, cap + 1, 2 * cap + 1, 0}));
    if (which == 2) break_shape(o);
    return o;
  }
  // A decode changes nothing, and building its attention problem would cost as much as the run.
  void follow(const op& o) override {
    if (o.kind != op_kind::decode) model_.apply(o);
  }

 private:
  rows_model model_;
};
}  // namespace

void rows_fuzz_config(byte_io& io, cache_config& c) {
  c.capacity = io.range(1, fuzz::max_capacity, c.capacity);
  c.d_k = io.range(1, fuzz::max_dim, c.d_k);
  c.d_v = io.range(1, fuzz::max_dim, c.d_v);
}

std::unique_ptr<fuzz_ops> rows_fuzz_ops(byte_io& io, const cache_config& c, rows_model::full rule) {
  return std::make_unique<rows_fuzz>(io, c, rule);
}

}  // namespace kvconform
