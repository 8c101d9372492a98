// The beam kind's lengthening for the targeted numeric search: an update at the decoded layer's length.
#include <algorithm>

#include "oracle/models/beam_model.h"
#include "properties/kinds/beam/parts.h"

namespace kvconform::kinds {

namespace {
/// The decode's mask for a layer now `length` long: each row's old entries, live beyond them.
tensor grown_mask(const tensor& mask, std::size_t batch, std::size_t length) {
  if (mask.shape.size() != 2 || mask.shape[0] != batch) return mask;
  const std::size_t old = mask.shape[1];
  tensor m{{batch, length}, {}};
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t i = 0; i < length; ++i) m.data.push_back(i < old ? mask.data[b * old + i] : 1.0);
  return m;
}
}  // namespace

std::optional<trace> beam_lengthen(const trace& t, const tensor& k, const tensor& v) {
  const cache_config& c = t.config;
  if (t.ops.empty() || t.ops.back().kind != op_kind::decode || k.shape.size() != 2 || v.shape != k.shape ||
      k.shape[1] != c.d_k || t.ops.back().layer < 0 || static_cast<std::size_t>(t.ops.back().layer) >= c.layers)
    return std::nullopt;
  trace out = t;
  op decode = std::move(out.ops.back());
  out.ops.pop_back();
  const std::size_t n = k.shape[0];
  std::size_t steps = n;  // a layer is never longer than all updates' and prefills' positions together
  for (const op& o : out.ops)
    if ((o.kind == op_kind::update || o.kind == op_kind::prefill) && o.k.shape.size() == 4) steps += o.k.shape[2];
  out.config.capacity = std::max(c.capacity, steps);
  beam_model m(out.config, numeric_profile{});  // lengths do not depend on the storage format
  for (const op& o : out.ops) m.apply(o);
  const std::size_t length = m.length(static_cast<std::size_t>(decode.layer));
  op u{.kind = op_kind::update, .layer = decode.layer, .start = static_cast<std::int64_t>(length)};
  u.k.shape = u.v.shape = {c.batch, c.heads, n, c.d_k};
  for (std::size_t bh = 0; bh < c.batch * c.heads; ++bh) {
    u.k.data.insert(u.k.data.end(), k.data.begin(), k.data.end());
    u.v.data.insert(u.v.data.end(), v.data.begin(), v.data.end());
  }
  decode.mask = grown_mask(decode.mask, c.batch, length + n);
  out.ops.push_back(std::move(u));
  out.ops.push_back(std::move(decode));
  return out;
}

}  // namespace kvconform::kinds
