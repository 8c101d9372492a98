// The shape checks every reference rows cache makes before an append changes anything.
#pragma once

#include <cstddef>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>

namespace kvconform {

/// The steps of an append of k and v to rows of widths d_k and d_v: each 1-D (one step) or 2-D,
/// the right widths, as many steps. Throws shape_error naming the first that fails. Its own header,
/// not array_view.h: plugin.h includes that one, and a free function taking array_view there would
/// meet a user's own unqualified function of the same name through argument-dependent lookup.
inline std::size_t checked_append_steps(const array_view& k, const array_view& v, std::size_t d_k, std::size_t d_v) {
  const steps_of ks(k), vs(v);
  if (!ks.ok || !vs.ok) throw shape_error("append: k and v must be 1-D or 2-D");
  if (ks.width != d_k || vs.width != d_v) throw shape_error("append: wrong width");
  if (ks.steps != vs.steps) throw shape_error("append: k and v differ in steps");
  return ks.steps;
}

/// The queries of a prefill of `steps` steps: q must be 2-D (steps, d_k). Throws shape_error otherwise.
inline void check_prefill_queries(const array_view& q, std::size_t steps, std::size_t d_k) {
  if (q.rank != 2 || q.dims[0] != steps || q.dims[1] != d_k) throw shape_error("prefill: q must be 2-D (steps, d_k)");
}

}  // namespace kvconform
