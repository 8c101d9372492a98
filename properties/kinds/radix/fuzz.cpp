// The radix kind's fuzz strategy: lookups of prompts held before, admits of chunks, retracts and aborts between them.
#include "oracle/models/radix_model.h"
#include "properties/generate/block_pool_fuzz.h"
#include "properties/kinds/radix/parts.h"

namespace kvconform::kinds {

namespace {
class radix_fuzz final : public model_fuzz_ops<radix_model> {
 public:
  using model_fuzz_ops::model_fuzz_ops;

  /// Flavour 1 a lookup or a create, 2 an admit, 3 an append of the prompt (or its prefill), 4 a retract, an abort,
  /// a release, a fork or a rollback, 5 a decode or a malformed append; each naming a live sequence once there is one.
  op make(int which) override {
    const auto live = model_.live();
    if (which == 1 || live.empty()) return lookup();
    op o;
    o.seq = live[io_.range(0, live.size() - 1, 0)];
    switch (which) {
      case 2: {
        const std::size_t prompt = model_.prompt(o.seq).size(), bs = c_.block_size;
        o.kind = op_kind::admit;
        o.count = static_cast<std::int64_t>(pick({1, bs, prompt, c_.capacity * bs + 1, 0}));
        return o;
      }
      case 3: return prompt_append(o, false);
      case 4: {
        static constexpr op_kind kinds[] = {op_kind::retract, op_kind::abort, op_kind::release, op_kind::fork,
                                            op_kind::rollback};
        o.kind = kinds[io_.range(0, 4, 0)];
        o.count = static_cast<std::int64_t>(pick({0, 1, model_.size(o.seq)}));
        return o;
      }
      default: return io_.range(0, 1, 0) ? decode_op(o) : prompt_append(o, true);
    }
  }

 private:
  /// A lookup (or a create) of a token sequence held before, whole or cut, with a few fresh tokens.
  op lookup() {
    op o;
    o.kind = io_.range(0, 3, 0) ? op_kind::lookup : op_kind::create;
    const auto& history = model_.history();
    if (!history.empty() && io_.range(0, 3, 0) > 0) {
      const auto& from = history[io_.range(0, history.size() - 1, 0)].tokens;
      o.tokens.assign(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(io_.range(0, from.size(), from.size())));
    }
    for (std::size_t extra = io_.range(0, 3, 0); extra > 0; --extra)
      o.tokens.push_back(static_cast<std::int64_t>(io_.range(0, 1, 0)));
    return o;
  }
  /// The next tokens of o.seq's prompt (or fresh ones past it), half the time as a prefill; `malformed` adds a token.
  op prompt_append(op o, bool malformed) {
    const auto& prompt = model_.prompt(o.seq);
    const auto& held = model_.tokens(o.seq);
    const std::size_t n = pick({1, c_.block_size, model_.room(o.seq), model_.room(o.seq) + 1});
    o.kind = op_kind::append;
    rows_of(o, static_cast<std::int64_t>(held.size()), n);
    for (std::size_t i = 0; i < n; ++i)
      o.tokens.push_back(held.size() + i < prompt.size() ? prompt[held.size() + i]
                                                         : static_cast<std::int64_t>(io_.range(0, 1, 0)));
    if (malformed) return o.tokens.push_back(0), o;
    if (io_.range(0, 1, 0)) as_prefill(o);
    return o;
  }
};
}  // namespace

/// A small pool of SGLang's page sizes 1, 2, 4 or 16.
void radix_fuzz_config(byte_io& io, cache_config& c) {
  block_pool_fuzz_config(io, c, 8, 4);
  static constexpr std::size_t pages[] = {1, 2, 4, 16};
  c.block_size = pages[c.block_size - 1];
}

std::unique_ptr<fuzz_ops> radix_fuzz_ops(byte_io& io, const cache_config& c) {
  return std::make_unique<radix_fuzz>(io, c);
}

}  // namespace kvconform::kinds
