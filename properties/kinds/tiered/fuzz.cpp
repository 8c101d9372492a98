// The tiered kind's fuzz strategy: prompts computed, stored, evicted and loaded back, transfers ended in any order.
#include "oracle/models/tiered_model.h"
#include "properties/generate/block_pool_fuzz.h"
#include "properties/kinds/tiered/parts.h"

namespace kvconform::kinds {

namespace {
class tiered_fuzz final : public model_fuzz_ops<tiered_model> {
 public:
  using model_fuzz_ops::model_fuzz_ops;

  /// Flavour 1 a create, 2 a store or a load, 3 a complete or a fail, 4 an append of the prompt (or its prefill),
  /// 5 an evict, a put, a decode, a fork, a release or a rollback; each naming a live sequence once there is one.
  op make(int which) override {
    op o;
    const auto live = model_.live();
    if (which == 1 || live.empty()) return create();
    o.seq = live[io_.range(0, live.size() - 1, 0)];
    switch (which) {
      case 2:
        o.kind = io_.range(0, 1, 0) ? op_kind::load : op_kind::store;
        o.tier = static_cast<std::int64_t>(io_.range(1, 2, 1));
        o.block = static_cast<std::int64_t>(pick({0, model_.size(o.seq) / model_.tier_rows(), 1}));
        if (o.kind == op_kind::load) o.block = 0;
        return o;
      case 3: {
        std::vector<std::size_t> ids;
        for (const auto& entry : model_.pending()) ids.push_back(static_cast<std::size_t>(entry.first));
        ids.push_back(static_cast<std::size_t>(model_.transfers()));  // never begun
        op end;
        end.kind = io_.range(0, 3, 0) ? op_kind::complete : op_kind::fail;
        end.transfer = static_cast<std::int64_t>(pick(ids));
        return end;
      }
      case 4: return prompt_append(o);
      default: break;
    }
    switch (io_.range(0, 5, 0)) {
      case 0: {
        op e;
        e.kind = op_kind::evict, e.tier = static_cast<std::int64_t>(io_.range(0, 2, 0));
        e.count = static_cast<std::int64_t>(io_.range(1, 2, 1));
        return e;
      }
      case 1: return put();
      case 2: return decode_op(o);
      case 3: return o.kind = op_kind::fork, o;
      case 4: return o.kind = op_kind::release, o;
      default:
        o.kind = op_kind::rollback, o.count = static_cast<std::int64_t>(pick({0, 1, model_.size(o.seq)}));
        return o;
    }
  }

 private:
  /// A create looking up a token sequence held or put before (or a prefix of it), or a few fresh tokens.
  op create() {
    op o;
    o.kind = op_kind::create;
    const auto& history = model_.history();
    if (!history.empty() && io_.range(0, 3, 0) > 0) {
      const auto& from = history[io_.range(0, history.size() - 1, 0)].tokens;
      o.tokens.assign(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(io_.range(0, from.size(), from.size())));
    }
    for (std::size_t extra = io_.range(0, 2, 0); extra > 0; --extra)
      o.tokens.push_back(static_cast<std::int64_t>(io_.range(0, 1, 0)));
    return o;
  }
  /// The next tokens of o.seq's prompt (or fresh ones past it), half the time as a prefill.
  op prompt_append(op o) {
    const auto &prompt = model_.prompt(o.seq), &held = model_.tokens(o.seq);
    const std::size_t n = pick({1, c_.block_size, model_.tier_rows(), model_.room(o.seq) + 1});
    o.kind = op_kind::append;
    rows_of(o, static_cast<std::int64_t>(held.size()), n);
    for (std::size_t i = 0; i < n; ++i)
      o.tokens.push_back(held.size() + i < prompt.size() ? prompt[held.size() + i]
                                                         : static_cast<std::int64_t>(io_.range(0, 1, 0)));
    if (io_.range(0, 1, 0)) as_prefill(o);
    return o;
  }
  /// One or two tier blocks of fresh tokens into host or disk.
  op put() {
    op o;
    o.kind = op_kind::put, o.tier = static_cast<std::int64_t>(io_.range(1, 2, 1));
    const std::size_t n = model_.tier_rows() * io_.range(1, 2, 1);
    rows_of(o, 0, n);
    for (std::size_t i = 0; i < n; ++i) o.tokens.push_back(static_cast<std::int64_t>(io_.range(0, 1, 0)));
    if (o.k.shape.size() == 1) o.k.shape = {1, o.k.shape[0]}, o.v.shape = {1, o.v.shape[0]};
    return o;
  }
};
}  // namespace

/// A small pool, tier blocks of one to three device blocks, a host of one to four and a disk of none to four.
void tiered_fuzz_config(byte_io& io, cache_config& c) {
  block_pool_fuzz_config(io, c, 8, 3);
  c.host_factor = io.range(1, 3, 1);
  c.host_blocks = io.range(1, 4, 2);
  c.disk_blocks = io.range(0, 4, 0);
}

std::unique_ptr<fuzz_ops> tiered_fuzz_ops(byte_io& io, const cache_config& c) {
  return std::make_unique<tiered_fuzz>(io, c);
}

}  // namespace kvconform::kinds
