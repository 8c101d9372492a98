// Lengthening a hybrid trace for the targeted numeric search (docs/numerics.md §4.4): the rows the decoded layer reads.
#include "properties/kinds/hybrid/parts.h"

namespace kvconform::kinds {

std::optional<trace> hybrid_lengthen(const trace& t, const tensor& k, const tensor& v) {
  trace out = t;
  if (out.ops.empty() || out.ops.back().kind != op_kind::decode || k.shape.size() != 2) return std::nullopt;
  const op decode = out.ops.back();
  out.ops.pop_back();
  cache_config& c = out.config;
  const std::size_t n = k.shape[0], bs = c.block_size;
  // Every earlier append and create may take a block per group more than its rows fill, and copy one.
  std::size_t blocks = 2 * ((n + bs - 1) / bs + 1);
  for (const op& o : out.ops)
    if (o.kind == op_kind::append || o.kind == op_kind::create)
      blocks += 2 * ((o.k.shape.size() >= 2 ? o.k.shape[o.k.shape.size() - 2] : 1) + bs - 1) / bs + 2;
  if (decode.layer == static_cast<std::int64_t>(c.layers)) {
    // The cross layer: encoder rows are fixed at create, so a new sequence, whose encoder rows end with the new
    // ones, is decoded instead (every earlier create takes as many rows again, a copy of the new ones).
    op create{.kind = op_kind::create};
    std::int64_t handles = 0;
    for (op& o : out.ops) {
      handles += o.kind == op_kind::create || o.kind == op_kind::fork ? 1 : 0;
      if (o.kind != op_kind::create || o.k.shape.size() != 2 || o.v.shape.size() != 2) continue;
      if (create.k.data.empty()) create.k = o.k, create.v = o.v;
      o.k.data.insert(o.k.data.end(), k.data.begin(), k.data.end()), o.k.shape[0] += n;
      o.v.data.insert(o.v.data.end(), v.data.begin(), v.data.end()), o.v.shape[0] += n;
      blocks += (n + bs - 1) / bs + 1;
    }
    if (create.k.data.empty()) return std::nullopt;  // no create took the encoder's rows
    create.k.data.insert(create.k.data.end(), k.data.begin(), k.data.end()), create.k.shape[0] += n;
    create.v.data.insert(create.v.data.end(), v.data.begin(), v.data.end()), create.v.shape[0] += n;
    c.cross += n;
    out.ops.push_back(std::move(create));
    op d = decode;
    d.seq = handles;
    c.capacity += blocks;
    out.ops.push_back(std::move(d));
    return out;
  } else {
    // Every writing layer gets the rows, and the window widens to hold them.
    if (c.window > 0) c.window += n;
    op append{.kind = op_kind::append, .seq = decode.seq};
    const std::size_t writers = c.layers - c.shared;
    for (std::size_t w = 0; w < writers; ++w) {
      append.k.data.insert(append.k.data.end(), k.data.begin(), k.data.end());
      append.v.data.insert(append.v.data.end(), v.data.begin(), v.data.end());
    }
    append.k.shape = {writers, n, c.d_k}, append.v.shape = {writers, n, c.d_v};
    out.ops.push_back(std::move(append));
  }
  c.capacity += blocks;
  out.ops.push_back(decode);
  return out;
}

}  // namespace kvconform::kinds
