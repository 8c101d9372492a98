// Flat caches computing a declared attention (docs/numerics.md §7): learned sinks, a window or chunk, a soft cap.
#pragma once

#include <cstddef>

#include "impls/flat/flat.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// The decisions of a declared-attention flat cache that its mutants change, one each.
struct declared_rules {
  using kernel = attention_kernel;
  /// Whether the query at position p reads row r: the declared window or chunk.
  static bool sees(const attention_semantics& a, std::size_t p, std::size_t r) { return a.sees(p, r); }
  /// Whether the sink joins a decode whose window masks rows (it always does).
  static constexpr bool sink_in_window = true;
};

/// Keeps every row as flat does; a decode and a prefill attend as `A::value` declares, with the op's sink logit.
/// `A` is a class holding `static constexpr attention_semantics value` (a class, not the value itself, so that
/// compilers without floating-point template arguments build it).
template <class A, class Rules = declared_rules>
class flat_declared : public basic_flat<> {
 public:
  using basic_flat::basic_flat;
  static constexpr numeric_profile profile{.attention = A::value};

  decode_result decode(array_view q, array_view sinks) const {
    if (q.rank != 1 || q.dims[0] != d_k()) throw shape_error("decode_step: q must be 1-D of width d_k");
    const score_terms t = terms(sinks);
    if (size() == 0) throw empty_error("decode_step: empty cache");
    const std::size_t p = size() - 1;
    return attend_rows(1, size(), q, t, [p](std::size_t, std::size_t r) { return Rules::sees(A::value, p, r); });
  }

  decode_result prefill(array_view k, array_view v, array_view q, array_view sinks) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v()), before = size();
    check_prefill_queries(q, steps, d_k());
    const score_terms t = terms(sinks);
    append(k, v);
    return attend_rows(steps, size(), q, t, [before](std::size_t i, std::size_t r) {
      return Rules::sees(A::value, before + i, r);
    });
  }

 private:
  static score_terms terms(array_view sinks) { return declared_terms(A::value, sinks); }
  template <class Sees>
  decode_result attend_rows(std::size_t m, std::size_t n, array_view q, score_terms t, Sees sees) const {
    const auto k = keys();
    const auto v = values();
    auto key = [&](std::size_t i) { return k.data() + i * d_k(); };
    auto value = [&](std::size_t i) { return v.data() + i * d_v(); };
    if constexpr (!Rules::sink_in_window) {
      // A windowed path that forgets the sink: every query whose window masks a row.
      decode_result r{Eigen::VectorXd::Zero(static_cast<Eigen::Index>(m * d_v())),
                      Eigen::VectorXd::Zero(static_cast<Eigen::Index>(m * n))};
      for (std::size_t i = 0; i < m; ++i) {
        bool masked = false;
        for (std::size_t j = 0; j + m <= n - 1 + i; ++j) masked = masked || !sees(i, j);
        score_terms ti = t;
        ti.has_sink = t.has_sink && !masked;
        const decode_result one = attend<typename Rules::kernel>(
            n, d_k(), d_v(), q.data + i * d_k(), key, value, [&](std::size_t j) { return sees(i, j); }, ti);
        r.output.segment(static_cast<Eigen::Index>(i * d_v()), static_cast<Eigen::Index>(d_v())) = one.output;
        r.weights.segment(static_cast<Eigen::Index>(i * n), static_cast<Eigen::Index>(n)) = one.weights;
      }
      return r;
    } else {
      return attend_causal<typename Rules::kernel>(m, n, d_k(), d_v(), q.data, key, value, sees, t);
    }
  }
};

template <class A, class Rules>
decode_result decode_step(array_view q, array_view sinks, const flat_declared<A, Rules>& c) {
  return c.decode(q, sinks);
}

namespace declared {
/// gpt-oss: learned sinks on a sliding window (8 rows here, so that quick traces pass it).
struct sinks_sliding {
  static constexpr attention_semantics value{.sinks = sink_kind::learned, .window = window_kind::sliding, .span = 8};
};
/// Llama 4's local layers: chunks of 8 positions.
struct chunked {
  static constexpr attention_semantics value{.window = window_kind::chunked, .span = 8};
};
/// Gemma 2: scores capped at 30 (its attention logits soft cap is 50; 30 bends the quick classes' scores more).
struct softcap {
  static constexpr attention_semantics value{.softcap = 30};
};
}  // namespace declared

}  // namespace kvconform
