// One head of latent (MLA) attention as the oracle sees it (docs/numerics.md §3.8): rows, query parts, projections.
#pragma once

#include <cstddef>
#include <vector>

#include "oracle/numeric/attention_problem.h"

namespace kvconform {

/// Every head reads the same latent rows [c_i ; k_r,i]; its own query parts and up-projections turn them into keys
/// [W_uk c_i ; k_r,i] and values W_uv c_i. `live` as in attention_problem.
struct latent_head {
  std::size_t n = 0, d_c = 0, d_r = 0, d_nope = 0, d_v = 0;
  std::vector<double> rows;    ///< n x (d_c + d_r), as stored
  std::vector<double> q_nope;  ///< d_nope
  std::vector<double> q_r;     ///< d_r
  std::vector<double> w_uk;    ///< d_nope x d_c, row-major
  std::vector<double> w_uv;    ///< d_v x d_c, row-major
  std::vector<unsigned char> live;
};

/// The head's materialised attention: keys of width d_nope + d_r (so the scale is the full head's,
/// 1/sqrt(d_nope + d_r)) and values of width d_v, each entry a double-double sum rounded once, with the latent
/// terms its bound takes; the query is [q_nope ; q_r].
attention_problem materialise(const latent_head& h);

}  // namespace kvconform
