// Chunked prefill and prefill as decode steps: the rewrites the prefill properties run beside the original.
#include "properties/generate/prefill_rewrites.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace kvconform {

namespace {
/// Rows [first, first + n) of a tensor along its first dimension (a step's k, v or queries).
tensor rows_of(const tensor& t, std::size_t first, std::size_t n) {
  if (t.shape.empty()) return t;  // a latent prefill's v: none
  const std::size_t w = t.data.size() / std::max<std::size_t>(t.shape[0], 1);
  tensor r;
  r.shape = t.shape, r.shape[0] = n;
  r.data.assign(t.data.begin() + static_cast<std::ptrdiff_t>(first * w),
                t.data.begin() + static_cast<std::ptrdiff_t>((first + n) * w));
  return r;
}

/// Step i of a tensor, without its step dimension (an append's 1-D k, a decode's query).
tensor step_of(const tensor& t, std::size_t i) {
  tensor r = rows_of(t, i, 1);
  if (!r.shape.empty()) r.shape.erase(r.shape.begin());
  return r;
}

/// Tokens [first, first + n) of a prefill that carries them (none otherwise).
std::vector<std::int64_t> tokens_of(const op& o, std::size_t first, std::size_t n) {
  if (o.tokens.size() < first + n) return {};
  return {o.tokens.begin() + static_cast<std::ptrdiff_t>(first),
          o.tokens.begin() + static_cast<std::ptrdiff_t>(first + n)};
}

/// The steps of a generated prefill (2-D k, v as k or none (latent), q of one query or Hq per step), or 0 for any
/// other op.
std::size_t prefill_steps(const op& o) {
  if (o.kind != op_kind::prefill || o.k.shape.size() != 2 || o.q.shape.size() < 2) return 0;
  const bool no_v = o.v.shape.empty() && o.v.data.empty();
  if (!o.k.consistent() || !(no_v || o.v.consistent()) || !o.q.consistent()) return 0;
  const std::size_t m = o.k.shape[0];
  const bool v_fits = no_v || (o.v.shape.size() == 2 && o.v.shape[0] == m);
  return v_fits && o.q.shape[0] == m ? m : 0;
}
/// Whether a prefill of m steps carries the indexer's inputs of sparse top-k, each with a row per step.
bool indexed(const op& o, std::size_t m) {
  for (const tensor* t : {&o.index_k, &o.index_q, &o.index_w})
    if (t->shape.size() < 2 || t->shape[0] != m || !t->consistent()) return false;
  return true;
}
}  // namespace

std::vector<std::size_t> chunk_sizes(const op& o, std::size_t m) {
  std::vector<std::size_t> sizes;
  switch (fnv1a(std::string_view(reinterpret_cast<const char*>(o.k.data.data()), 8 * m)) % 4) {
    case 0: sizes.assign(m, 1); break;
    case 1:
      for (std::size_t at = 0, i = 0; at < m; at += sizes.back(), ++i)
        sizes.push_back(std::min<std::size_t>(std::array<std::size_t, 4>{2, 3, 5, 7}[i % 4], m - at));
      break;
    case 2: sizes = {1, m - 1}; break;
    default: sizes = {m - 1, 1}; break;
  }
  return sizes;
}

std::vector<op> prefill_as_chunks(const op& o) {
  const std::size_t m = prefill_steps(o);
  if (m < 2) return {o};
  std::vector<op> chunks;
  for (std::size_t at = 0; std::size_t n : chunk_sizes(o, m)) {
    op c = o;
    c.k = rows_of(o.k, at, n), c.v = rows_of(o.v, at, n), c.q = rows_of(o.q, at, n), c.tokens = tokens_of(o, at, n);
    if (indexed(o, m))
      c.index_k = rows_of(o.index_k, at, n), c.index_q = rows_of(o.index_q, at, n),
      c.index_w = rows_of(o.index_w, at, n);
    chunks.push_back(std::move(c));
    at += n;
  }
  return chunks;
}

std::vector<op> prefill_as_steps(const op& o) {
  const std::size_t m = prefill_steps(o);
  if (m == 0) return {o};
  std::vector<op> steps;
  for (std::size_t i = 0; i < m; ++i) {
    op a{.kind = op_kind::append, .k = step_of(o.k, i), .v = step_of(o.v, i)};
    a.seq = o.seq, a.tokens = tokens_of(o, i, 1);
    op d{.kind = op_kind::decode, .q = step_of(o.q, i)};
    d.seq = o.seq, d.w_uk = o.w_uk, d.w_uv = o.w_uv;  // a latent step's heads keep the prefill's projections
    d.sinks = o.sinks;                                // and every step the prefill's sink logits
    if (indexed(o, m))
      a.index_k = step_of(o.index_k, i), d.index_q = step_of(o.index_q, i), d.index_w = step_of(o.index_w, i);
    steps.push_back(std::move(a)), steps.push_back(std::move(d));
  }
  return steps;
}

}  // namespace kvconform
