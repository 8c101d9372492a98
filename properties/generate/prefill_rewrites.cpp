// Chunked prefill and prefill as decode steps: the rewrites the prefill properties run beside the original.
#include "properties/generate/prefill_rewrites.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace kvconform {

namespace {
/// Rows [first, first + n) of a 2-D tensor.
tensor rows_of(const tensor& t, std::size_t first, std::size_t n) {
  const std::size_t w = t.shape[1];
  return tensor::matrix(n, w,
                        {t.data.begin() + static_cast<std::ptrdiff_t>(first * w),
                         t.data.begin() + static_cast<std::ptrdiff_t>((first + n) * w)});
}

/// Tokens [first, first + n) of a prefill that carries them (none otherwise).
std::vector<std::int64_t> tokens_of(const op& o, std::size_t first, std::size_t n) {
  if (o.tokens.size() < first + n) return {};
  return {o.tokens.begin() + static_cast<std::ptrdiff_t>(first),
          o.tokens.begin() + static_cast<std::ptrdiff_t>(first + n)};
}

/// The steps of a generated prefill (2-D k, v and q), or 0 for any other op.
std::size_t prefill_steps(const op& o) {
  const bool two_d = o.k.shape.size() == 2 && o.v.shape.size() == 2 && o.q.shape.size() == 2;
  return o.kind == op_kind::prefill && two_d && o.k.shape[0] == o.v.shape[0] && o.k.shape[0] == o.q.shape[0]
             ? o.k.shape[0]
             : 0;
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
    op a{.kind = op_kind::append, .k = rows_of(o.k, i, 1), .v = rows_of(o.v, i, 1)};
    a.k.shape = {a.k.shape[1]}, a.v.shape = {a.v.shape[1]};
    a.seq = o.seq, a.tokens = tokens_of(o, i, 1);
    op d{.kind = op_kind::decode, .q = rows_of(o.q, i, 1)};
    d.q.shape = {d.q.shape[1]};
    d.seq = o.seq;
    steps.push_back(std::move(a)), steps.push_back(std::move(d));
  }
  return steps;
}

}  // namespace kvconform
