// Sparse top-k (docs/numerics.md §7.4): index keys as stored, index scores with their slack, a choice judged as a set.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "oracle/numeric/attention_semantics.h"

namespace kvconform {

/// The rows one decode may attend and how the declared indexer ranks them. A problem carries one when more rows are
/// visible than the top-k attends; which of them the cache attended is then read from its weights.
struct top_k_choice {
  std::size_t k = 0;
  std::vector<unsigned char> candidate;  ///< per row of the problem: 1 when its query sees it
  std::vector<double> score;             ///< per row: the exact index score, rounded once
  std::vector<double> slack;             ///< per row: how far a cache's own rounding may move it
};

/// Row `x` (width a.index_width) as the declared index format stores it: each entry rounded to the element format;
/// row-scaled, the scale s = amax / max finite (computed in double, rounded to f32), the exact quotient x / s rounded
/// once, times s. An all-zero row (or one whose scale is 0 in f32) stores zeros.
std::vector<double> stored_index_row(const attention_semantics& a, const double* x);

/// One row's index score sum_h w_h max(0, q_h . key) over the indexer's heads (`q`: heads x width, `w`: heads),
/// rounded once from double-double, and the slack a cache computing it in unit roundoff `u` (in any order, with
/// FMA or without) stays within: gamma_{D+H+1} sum_h |w_h| sum_j |q_hj key_j| plus that rounding and an underflow
/// term of `tiny` per operation.
struct index_score {
  double value = 0, slack = 0;
};
index_score score_index_row(const attention_semantics& a, const double* q, const double* w, const double* key, double u,
                            double tiny);

/// The rows the declared top-k attends: the k candidates of highest score, an earlier row first among equal ones.
std::vector<unsigned char> declared_top_k(const top_k_choice& c);

/// Whether the k-th and (k+1)-th best candidates lie within their slack of each other, so that more than one set of
/// rows is admissible.
bool ambiguous_at_k(const top_k_choice& c);

/// Judges the rows a cache attended (weight other than 0) as a set: every row it attends could be among the k best
/// within the slack, and it attends no more than k. On success "" and `live` holds the rows the oracle then judges:
/// the cache's, those every admissible choice holds, and, where weights that rounded to 0 leave fewer than k, the
/// admissible rows of lowest `attention` score (per row; those whose weights round to 0 first), else the declared
/// order's. Otherwise what is wrong, in words.
std::string resolve_choice(const top_k_choice& c, const double* weights, std::vector<unsigned char>& live,
                           const std::vector<double>& attention = {});

}  // namespace kvconform
