// Lengthening a trace for the targeted numeric search (docs/numerics.md §4.4): rows kinds and block pools.
#include "properties/generate/lengthen.h"

#include "properties/trace/kind_spec.h"

namespace kvconform {

namespace {
/// `t` without its final decode, which is returned; nullopt when the last op is no decode.
std::optional<op> take_decode(trace& t) {
  if (t.ops.empty() || t.ops.back().kind != op_kind::decode) return std::nullopt;
  op d = std::move(t.ops.back());
  t.ops.pop_back();
  return d;
}
}  // namespace

std::optional<trace> rows_lengthen(const trace& t, const tensor& k, const tensor& v, rows_model::full rule) {
  trace out = t;
  const std::optional<op> decode = take_decode(out);
  if (!decode || k.shape.size() != 2) return std::nullopt;
  const std::size_t n = k.shape[0];
  std::size_t earlier = 0;  // steps of every earlier append, accepted or not
  for (const op& o : out.ops) earlier += append_steps(o, t.config.d_k, t.config.d_v).value_or(0);
  if (rule == rows_model::full::refuse) out.config.capacity += n + earlier;
  if (rule == rows_model::full::evict) out.config.capacity += n;
  out.ops.push_back(op{.kind = op_kind::append, .k = k, .v = v});
  out.ops.push_back(*decode);
  return out;
}

std::optional<trace> pool_lengthen(const trace& t, const tensor& k, const tensor& v) {
  trace out = t;
  const std::optional<op> decode = take_decode(out);
  const std::size_t bs = t.config.block_size;
  if (!decode || k.shape.size() != 2 || bs == 0) return std::nullopt;
  op append{.kind = op_kind::append, .k = k, .v = v, .seq = decode->seq};
  if (spec_of(t.config.kind).find(op_kind::append)->fields & field_tokens)
    for (std::size_t r = 0; r < k.shape[0]; ++r) append.tokens.push_back(1000000 + static_cast<std::int64_t>(r));
  std::size_t blocks = 0;  // an append of n rows takes at most ceil(n / bs) blocks and one copy on write
  for (const op& o : out.ops)
    if (o.kind == op_kind::append)
      blocks += (append_steps(o, t.config.d_k, t.config.d_v).value_or(0) + bs - 1) / bs + 1;
  blocks += (k.shape[0] + bs - 1) / bs + 1;
  out.config.capacity += blocks;
  out.ops.push_back(std::move(append));
  out.ops.push_back(*decode);
  return out;
}

}  // namespace kvconform
