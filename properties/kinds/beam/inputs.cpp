// Beam-shaped inputs: every (row, head) gets its own draw from the trace's input class.
#include "properties/kinds/beam/inputs.h"

namespace kvconform {

void beam_block(const row_source& src, std::size_t batch, std::size_t heads, std::int64_t first, std::size_t n,
                std::uint64_t seed, tensor& k, tensor& v) {
  k.data.clear(), v.data.clear();
  for (std::size_t bh = 0; bh < batch * heads; ++bh)
    src.rows(first, n, seed + bh * 0x9e3779b97f4a7c15ull, k.data, v.data);
  k.shape = v.shape = {batch, heads, n, src.d_k()};
}

tensor beam_query(const row_source& src, std::size_t batch, std::size_t q_heads) {
  tensor q{{batch, q_heads, src.d_k()}, {}};
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t h = 0; h < q_heads; ++h)
      for (double x : src.query()) q.data.push_back(h % 2 ? -x : x);
  return q;
}

tensor left_padding_mask(const std::vector<std::size_t>& pads, std::size_t length) {
  tensor m{{pads.size(), length}, {}};
  for (std::size_t pad : pads)
    for (std::size_t t = 0; t < length; ++t) m.data.push_back(t < pad ? 0.0 : 1.0);
  return m;
}

}  // namespace kvconform
