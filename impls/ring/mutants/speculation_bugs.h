// Mutants of a window's prefill and rollback (docs/mutants.md): a stale window after a rollback, late prefill queries.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "impls/ring/ring.h"

namespace kvconform::mutants {

/// ring-rollback-stale-window (mlx-lm #1486, a trim that does not shrink the buffer): a rollback shrinks the
/// views, but decodes from then on attend the window as if the rolled-back steps were still there, read from slots.
struct ring_rollback_keeps_attending : ring {
  using ring::ring;
  void rollback(std::size_t n) {
    ring::rollback(n);
    ghost_ += static_cast<std::int64_t>(n);
  }
  decode_result stale_decode(const double* q) const {
    if (ghost_ == 0) return attend_window(q);
    const std::int64_t end = total_ + ghost_, keep = static_cast<std::int64_t>(keep_),
                       w = static_cast<std::int64_t>(window());
    std::vector<std::size_t> read;  // the slots of the sinks, then of the window's other steps up to `end`
    for (std::int64_t p = 0; p < std::min(keep, end); ++p) read.push_back(write_slot(static_cast<std::size_t>(p)));
    for (std::int64_t p = std::max(keep, end - (w - keep)); p < end; ++p)
      read.push_back(write_slot(static_cast<std::size_t>(p)));
    return attend(
        read.size(), d_k(), d_v(), q, [&](std::size_t i) { return k_.data() + read[i] * d_k(); },
        [&](std::size_t i) { return v_.data() + read[i] * d_v(); });
  }

 private:
  std::int64_t ghost_ = 0;  // steps rolled back, which the decode still counts
};
inline decode_result decode_step(array_view q, const ring_rollback_keeps_attending& c) {
  if (q.rank != 1 || q.dims[0] != c.d_k()) throw shape_error("decode_step: q must be 1-D of width d_k");
  if (c.size() == 0) throw empty_error("decode_step: empty cache");
  return c.stale_decode(q.data);
}

/// ring-prefill-late-window (vLLM #26042 for a window): a prefill appends its whole chunk first, so its early queries
/// attend the window left after the chunk, missing the rows the chunk evicted.
struct ring_prefill_late_window : ring {
  using ring::ring;
  decode_result prefill(array_view k, array_view v, array_view q) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v()), before = size();
    check_prefill_queries(q, steps, d_k());
    const std::int64_t t0 = total_;
    append(k, v);
    const std::size_t width = before + steps;
    const std::vector<std::int64_t> pos = positions();
    decode_result r{Eigen::VectorXd::Zero(static_cast<Eigen::Index>(steps * d_v())),
                    Eigen::VectorXd::Zero(static_cast<Eigen::Index>(steps * width))};
    for (std::size_t i = 0; i < steps; ++i) {
      const std::int64_t at = t0 + static_cast<std::int64_t>(i);
      const decode_result one = attend(
          size(), d_k(), d_v(), q.data + i * d_k(), [&](std::size_t h) { return key_row(h); },
          [&](std::size_t h) { return value_row(h); },
          [&](std::size_t h) { return pos[h] <= at && in_window(h, at + 1); });
      r.output.segment(static_cast<Eigen::Index>(i * d_v()), static_cast<Eigen::Index>(d_v())) = one.output;
      scatter_weights(one, t0, before, r.weights.data() + i * width);
    }
    return r;
  }
};

}  // namespace kvconform::mutants
