// The prefix kind's fuzz strategy: creates that look up prefixes held before, appends that run the pool dry.
#include "oracle/models/prefix_model.h"
#include "properties/generate/block_pool_fuzz.h"
#include "properties/kinds/prefix/parts.h"

namespace kvconform::kinds {

namespace {
class prefix_fuzz final : public block_pool_fuzz<prefix_model> {
 public:
  using block_pool_fuzz::block_pool_fuzz;

 private:
  bool name_sequence(op& o, int which, const std::vector<std::int64_t>& live) override {
    if (which == 1 || live.empty()) return create(o), false;
    o.seq = one_of(live);
    return true;
  }
  /// Appends of a token per step; a malformed one has a token too many or a broken shape.
  void append(op& o, bool malformed, const std::vector<std::int64_t>&) override {
    const std::size_t room = model_.room(o.seq), bs = c_.block_size;
    const std::size_t n = pick({1, 2, bs, room, room + 1, 0});
    rows_of(o, static_cast<std::int64_t>(model_.size(o.seq)), n);
    for (std::size_t i = 0; i < n; ++i) o.tokens.push_back(static_cast<std::int64_t>(io_.range(0, 1, 0)));
    if (malformed) io_.range(0, 1, 0) ? o.tokens.push_back(0) : break_shape(o);
  }
  /// A create looking up a prefix of a token sequence held before, or a few fresh tokens.
  void create(op& o) {
    o.kind = op_kind::create;
    const auto& history = model_.history();
    if (!history.empty() && io_.range(0, 3, 0) > 0) {
      const auto& from = history[io_.range(0, history.size() - 1, 0)];
      o.tokens.assign(from.tokens.begin(),
                      from.tokens.begin() + static_cast<std::ptrdiff_t>(io_.range(0, from.tokens.size(), 0)));
      o.extra_key = from.extra_key;
    }
    for (std::size_t extra = io_.range(0, 2, 0); extra > 0; --extra)
      o.tokens.push_back(static_cast<std::int64_t>(io_.range(0, 1, 0)));
  }
};
}  // namespace

void prefix_fuzz_config(byte_io& io, cache_config& c) { block_pool_fuzz_config(io, c, 8, 3); }

std::unique_ptr<fuzz_ops> prefix_fuzz_ops(byte_io& io, const cache_config& c) {
  return std::make_unique<prefix_fuzz>(io, c);
}

}  // namespace kvconform::kinds
