// Generators of the rows family (flat, ring, growing): appends around the capacity or window, decodes, shape errors.
#pragma once

#include <memory>

#include "oracle/models/rows_model.h"
#include "properties/executor/kind_table.h"
#include "properties/generate/fuzz_ops.h"
#include "properties/generate/lengthen.h"
#include "properties/generate/property.h"

namespace kvconform {

/// Relative weights of the ops a rows property draws (0 = never).
struct rows_mix {
  int append = 6;     ///< n in [1, max_steps], 1-D or 2-D
  int fill = 0;       ///< exactly up to capacity (refusing); n = W-1, W, W+1 or to the wrap point (evicting)
  int overfill = 0;   ///< capacity - len + 1 or more steps (refusing); n = W+1, 2W+1, 3W (evicting)
  int empty = 1;      ///< a 2-D append of 0 steps
  int bad_shape = 0;  ///< wrong width, wrong rank, or k and v differing in steps
  int decode = 2;
  int bad_decode = 0;  ///< q of the wrong width or rank, or a decode of an empty cache
  int prefill = 0;   ///< 1, 2, a few, the room or about the window steps, each attending causally (capability prefill)
  int rollback = 0;  ///< 0, 1, the last prefill's drafts, every row, the reserve (capability rollback)
  int bad_rollback = 0;  ///< one more than held, one beyond a full window's reserve, or -1
  int round = 0;  ///< a speculative round: prefill k drafts, roll back k - j (j in [0, k]), append the bonus step
};

/// The cases of a rows property: a config of the kind (capacity, d_k, d_v), then ops drawn from
/// `mix`, sized from a model whose full cache follows `rule`.
case_generator rows_cases(rows_model::full rule, rows_mix mix);

/// The cross-kind statements (properties/generate/statements.h) with the op mixes every rows kind
/// uses, in the gate's order: refused_append_unchanged, copy_semantics, views_filled_rows,
/// one_d_equals_one_row, order_preserved, large_scores, decode_within_bound.
void add_rows_statements(std::vector<property>& ps, cache_kind kind, rows_model::full rule);

/// The prefill and rollback properties every rows kind has (properties/generate/rows_speculation.cpp), after its
/// own: chunked prefill, prefill as decode steps, speculative rounds, refused rollbacks.
void add_speculation_properties(std::vector<property>& ps, cache_kind kind, rows_model::full rule);

/// The rows kinds' fuzz strategy: capacity, d_k, d_v from the bytes (fuzz_sizes); then appends of 1, 2, the room,
/// the room + 1, W - 1, W, W + 1, 2W + 1 or 0 steps (flavour 3; 2 breaks the shape), prefills of as many (4),
/// rollbacks of 0, 1, the drafts, every row, one more or the reserve (5) and decodes (1).
std::unique_ptr<fuzz_ops> rows_fuzz_ops(byte_io& io, const cache_config& c, rows_model::full rule);

/// The model of a rows kind whose full cache follows `rule` (a kind table row's model factory).
template <rows_model::full rule>
std::unique_ptr<model> rows_model_of(const cache_config& c, const numeric_profile& p, const policy_set& policies) {
  return std::make_unique<rows_model>(c, p, rule, policies);
}
/// The fuzz ops of a rows kind whose full cache follows `rule`.
template <rows_model::full rule>
std::unique_ptr<fuzz_ops> rows_fuzz_of(byte_io& io, const cache_config& c) {
  return rows_fuzz_ops(io, c, rule);
}

/// The targeted search's lengthening of a rows kind whose full cache follows `rule` (lengthen.h).
template <rows_model::full rule>
std::optional<trace> rows_lengthen_of(const trace& t, const tensor& k, const tensor& v) {
  return rows_lengthen(t, k, v, rule);
}

/// The kind-table row of a rows kind whose full cache follows `rule` (its fuzz config: the sizes,
/// unless the kind has more fields).
template <rows_model::full rule>
kind_descriptor rows_kind(const kind_spec& spec, void (*add_properties)(std::vector<property>&), coverage_spec coverage,
                          void (*fuzz_config)(byte_io&, cache_config&) = fuzz_sizes) {
  return {spec,     rows_model_of<rule>,   add_properties, {fuzz_config, rows_fuzz_of<rule>},
          coverage, rows_lengthen_of<rule>};
}

}  // namespace kvconform
