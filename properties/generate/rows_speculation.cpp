// The rows kinds' prefill and rollback properties: chunked prefill, prefill as decode steps, speculative rounds.
#include <array>
#include <string_view>

#include "properties/generate/rows_generators.h"
#include "properties/generate/statements.h"

namespace kvconform {

namespace {
/// Rows [first, first + n) of a 2-D tensor.
tensor rows_of(const tensor& t, std::size_t first, std::size_t n) {
  const std::size_t w = t.shape[1];
  return tensor::matrix(n, w,
                        {t.data.begin() + static_cast<std::ptrdiff_t>(first * w),
                         t.data.begin() + static_cast<std::ptrdiff_t>((first + n) * w)});
}

/// The steps of a generated prefill (2-D k, v and q), or 0 for any other op.
std::size_t prefill_steps(const op& o) {
  const bool two_d = o.k.shape.size() == 2 && o.v.shape.size() == 2 && o.q.shape.size() == 2;
  return o.kind == op_kind::prefill && two_d && o.k.shape[0] == o.v.shape[0] && o.k.shape[0] == o.q.shape[0]
             ? o.k.shape[0]
             : 0;
}

/// A prefill of m steps as prefills of consecutive chunks, chosen from its data: chunks of 1, of the primes 2, 3,
/// 5, 7 in turn, one step then the rest, or the rest then one step (so chunks straddle a window or a capacity
/// wherever the prompt does).
std::vector<op> prefill_as_chunks(const op& o) {
  const std::size_t m = prefill_steps(o);
  if (m < 2) return {o};
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
  std::vector<op> chunks;
  for (std::size_t at = 0; std::size_t n : sizes) {
    op c = o;
    c.k = rows_of(o.k, at, n), c.v = rows_of(o.v, at, n), c.q = rows_of(o.q, at, n);
    chunks.push_back(std::move(c));
    at += n;
  }
  return chunks;
}

/// A prefill as token-by-token decoding: each step appended (1-D), then decoded with its own query row.
std::vector<op> prefill_as_steps(const op& o) {
  const std::size_t m = prefill_steps(o);
  if (m == 0) return {o};
  std::vector<op> steps;
  for (std::size_t i = 0; i < m; ++i) {
    op a{.kind = op_kind::append, .k = rows_of(o.k, i, 1), .v = rows_of(o.v, i, 1)};
    a.k.shape = {a.k.shape[1]}, a.v.shape = {a.v.shape[1]};
    op d{.kind = op_kind::decode, .q = rows_of(o.q, i, 1)};
    d.q.shape = {d.q.shape[1]};
    steps.push_back(std::move(a)), steps.push_back(std::move(d));
  }
  return steps;
}
}  // namespace

void add_speculation_properties(std::vector<property>& ps, cache_kind kind, rows_model::full rule) {
  auto add = [&](const char* name, const char* summary, rows_mix mix, capability_set needs) -> property& {
    property& p = add_property(ps, kind, name, summary);
    p.generate = rows_cases(rule, mix);
    p.needs = needs;
    return p;
  };
  add("prefill_chunked_equals_whole",
      "a prefill in chunks (of 1, of primes, straddling the window or the capacity) leaves the state of the whole "
      "prefill at once, every query's output and weights within the bound",
      {.append = 2, .empty = 0, .decode = 1, .prefill = 6}, {capability::prefill})
      .rewrite = prefill_as_chunks;
  add("prefill_equals_decode_steps",
      "a prefill leaves the state of appending its steps one by one, each decoded with its own query, and its "
      "causal outputs lie within the bound",
      {.append = 2, .empty = 0, .decode = 1, .prefill = 6}, {capability::prefill, capability::decode})
      .rewrite = prefill_as_steps;
  add("speculative_rounds",
      "speculative rounds (prefill k drafts, accept j of them with 0 and k included, roll back k - j, append the "
      "bonus; rollbacks in a row) leave the state of a cache that only saw the accepted steps",
      {.append = 1, .empty = 0, .decode = 3, .rollback = 2, .round = 6}, {capability::prefill, capability::rollback});
  add("refused_rollback_unchanged",
      "a rollback of more steps than held, beyond a full window's reserve, or of a negative count is refused with "
      "`index` and changes nothing",
      {.append = 4, .overfill = 1, .empty = 0, .decode = 1, .rollback = 2, .bad_rollback = 5}, {capability::rollback});
}

}  // namespace kvconform
