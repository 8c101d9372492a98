// The beam kind's prefill properties: a prefill in chunks, and a prefill as single-step updates each decoded.
#include "properties/generate/prefill_rewrites.h"
#include "properties/generate/statements.h"
#include "properties/kinds/beam/parts.h"

namespace kvconform::kinds {

namespace {
/// Positions [first, first + n) of a (B, X, m, D) tensor (k, v or a prefill's q).
tensor positions_of(const tensor& t, std::size_t first, std::size_t n) {
  const std::size_t rows = t.shape[0] * t.shape[1], m = t.shape[2], d = t.shape[3];
  tensor out{{t.shape[0], t.shape[1], n, d}, {}};
  for (std::size_t r = 0; r < rows; ++r) {
    const auto at = t.data.begin() + static_cast<std::ptrdiff_t>((r * m + first) * d);
    out.data.insert(out.data.end(), at, at + static_cast<std::ptrdiff_t>(n * d));
  }
  return out;
}

/// The first `width` positions of every row of a (B, len + m) mask.
tensor mask_prefix(const tensor& mask, std::size_t width) {
  const std::size_t b = mask.shape[0], w = mask.shape[1];
  tensor out{{b, width}, {}};
  for (std::size_t r = 0; r < b; ++r) {
    const auto at = mask.data.begin() + static_cast<std::ptrdiff_t>(r * w);
    out.data.insert(out.data.end(), at, at + static_cast<std::ptrdiff_t>(width));
  }
  return out;
}

/// The positions of a well-formed prefill (k, v and q of rank 4 and as many positions, a mask of rank 2 at least
/// that wide, if any), or 0 for any other op.
std::size_t prefill_positions(const op& o) {
  if (o.kind != op_kind::prefill || o.k.shape.size() != 4 || o.v.shape != o.k.shape || o.q.shape.size() != 4 ||
      o.q.shape[2] != o.k.shape[2])
    return 0;
  const std::size_t m = o.k.shape[2];
  const bool mask_ok = o.mask.shape.empty() || (o.mask.shape.size() == 2 && o.mask.shape[1] >= m);
  return mask_ok ? m : 0;
}

/// The layer's length before a prefill of m positions, from its mask's width (0 without a mask).
std::size_t length_before(const op& o, std::size_t m) { return o.mask.shape.empty() ? 0 : o.mask.shape[1] - m; }

/// A prefill of m positions as prefills of consecutive chunks of chunk_sizes; each chunk's mask is the prefix up to
/// its end.
std::vector<op> positions_as_chunks(const op& o) {
  const std::size_t m = prefill_positions(o);
  if (m < 2) return {o};
  const std::size_t before = length_before(o, m);
  std::vector<op> chunks;
  for (std::size_t at = 0; std::size_t n : chunk_sizes(o, m)) {
    op c = o;
    c.k = positions_of(o.k, at, n), c.v = positions_of(o.v, at, n), c.q = positions_of(o.q, at, n);
    if (!o.mask.shape.empty()) c.mask = mask_prefix(o.mask, before + at + n);
    chunks.push_back(std::move(c));
    at += n;
  }
  return chunks;
}

/// A prefill as token-by-token decoding: each position written by a one-step update at the layer's length, then
/// decoded with its own queries and the mask up to its position. The length comes from the mask's width, so a
/// prefill without a mask stays as it is (the generator of the property masks every prefill).
std::vector<op> prefill_as_decode_steps(const op& o) {
  const std::size_t m = prefill_positions(o);
  if (m == 0 || o.mask.shape.empty()) return {o};
  const std::size_t before = length_before(o, m);
  std::vector<op> steps;
  for (std::size_t i = 0; i < m; ++i) {
    op u{.kind = op_kind::update, .layer = o.layer, .start = static_cast<std::int64_t>(before + i)};
    u.k = positions_of(o.k, i, 1), u.v = positions_of(o.v, i, 1);
    op d{.kind = op_kind::decode,
         .q = positions_of(o.q, i, 1),
         .layer = o.layer,
         .mask = mask_prefix(o.mask, before + i + 1)};
    d.q.shape = {o.q.shape[0], o.q.shape[1], o.q.shape[3]};
    steps.push_back(std::move(u)), steps.push_back(std::move(d));
  }
  return steps;
}
}  // namespace

void add_prefill_properties(std::vector<property>& ps) {
  add_property(
      ps, cache_kind::beam, "beam_prefill_chunked_equals_whole",
      "a prefill in chunks (of 1, of primes, one and the rest) leaves stored positions bit-identical to the whole "
      "prefill at once, and every query of both attends causally within the bound",
      beam_cases({.append = 2, .empty = 0, .decode = 1, .rollback = 1, .reorder = 1, .prefill = 6}),
      {capability::prefill})
      .rewrite = positions_as_chunks;
  add_property(
      ps, cache_kind::beam, "beam_prefill_equals_decode_steps",
      "a prefill leaves the state of single-step updates at the layer's length, each decoded with its own queries "
      "and the mask up to its position, and its causal outputs lie within the bound",
      beam_cases({.append = 2, .empty = 0, .decode = 1, .rollback = 1, .prefill = 6, .mask_prefills = true}),
      {capability::prefill, capability::decode})
      .rewrite = prefill_as_decode_steps;
}

}  // namespace kvconform::kinds
