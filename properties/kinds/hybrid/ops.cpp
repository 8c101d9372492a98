// The hybrid kind's op builders: every writing layer's rows in one append, the encoder's rows in a create.
#include "properties/kinds/hybrid/parts.h"

namespace kvconform::kinds {

namespace {
/// Row positions of the encoder, far from the decoder's, so that its rows are drawn apart from theirs.
constexpr std::int64_t encoder_first = 1 << 20;
}  // namespace

op hybrid_append_op(const row_source& src, const cache_config& c, std::int64_t seq, std::int64_t first, std::size_t n,
                    std::uint64_t seed) {
  op o;
  o.kind = op_kind::append;
  o.seq = seq;
  const std::size_t writers = c.layers - c.shared;
  // Each writing layer draws its own rows: a cache that mixes layers up shows it.
  for (std::size_t w = 0; w < writers; ++w)
    src.rows(first, n, seed + 0x9e3779b97f4a7c15ull * (w + 1), o.k.data, o.v.data);
  o.k.shape = {writers, n, c.d_k}, o.v.shape = {writers, n, c.d_v};
  o.tokens = hybrid_tokens(seed, n);
  return o;
}

std::vector<std::int64_t> hybrid_tokens(std::uint64_t seed, std::size_t n) {
  std::vector<std::int64_t> t;
  // Four token values: sequences drawn apart share a prefix now and then too.
  for (std::size_t i = 0; i < n; ++i)
    t.push_back(static_cast<std::int64_t>(((seed >> 7) + 0x9e37u * i) * 2654435761u >> 13 & 3));
  return t;
}

op hybrid_create_op(const row_source& src, const cache_config& c, std::uint64_t seed,
                    std::vector<std::int64_t> prompt) {
  op o;
  o.kind = op_kind::create;
  o.tokens = std::move(prompt);
  src.rows(encoder_first, c.cross, seed, o.k.data, o.v.data);
  o.k.shape = {c.cross, c.d_k}, o.v.shape = {c.cross, c.d_v};
  return o;
}

}  // namespace kvconform::kinds
