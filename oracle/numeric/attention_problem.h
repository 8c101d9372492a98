// One attention decode as the oracle sees it: exactly the keys, values and query consumed.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "oracle/numeric/shared_doubles.h"

namespace kvconform {

struct top_k_choice;  // oracle/numeric/top_k.h

/// The magnitudes of a latent (MLA) head whose keys and values were materialised from latent rows (docs/numerics.md
/// §3.8): a cache may multiply in either order, so its bound takes the absolute products in place of the rows'.
struct latent_terms {
  std::size_t inner = 0;            ///< d_c: the latent width every product runs over
  std::vector<double> keys;         ///< per row i: |q_nope|^T |W_uk| |c_i| + |q_r|^T |k_r,i|
  std::vector<double> values;       ///< n x d_v: (|W_uv| |c_i|)_c
  std::vector<double> projections;  ///< per output component c: sum_m |W_uv[c][m]|
  double latent_max = 0;            ///< the largest |c_im|
};

/// Inputs of one decode of one (query) head, already rounded to the implementation's storage
/// format. `live` is empty when every key takes part; otherwise 0 marks a masked key, whose
/// weight must be exactly 0.
struct attention_problem {
  std::size_t n = 0, d_k = 0, d_v = 0;
  shared_doubles keys;    ///< n x d_k, row-major (a prefill's problems share one block)
  shared_doubles values;  ///< n x d_v, row-major
  std::vector<double> q;  ///< d_k
  std::vector<unsigned char> live;
  std::shared_ptr<const latent_terms> latent;  ///< set for a latent head: keys and values are materialised
  /// Declared attention semantics (docs/numerics.md §7): c > 0 caps every score as c tanh(s / c); a learned sink's
  /// logit joins the normaliser with no value.
  double softcap = 0;
  bool has_sink = false;
  double sink = 0;
  /// Sparse top-k (§7.4), when the query sees more rows than it attends: `live` holds the declared choice until the
  /// cache's own is judged as a set (resolve_choice) and replaces it.
  std::shared_ptr<const top_k_choice> choice;

  bool is_live(std::size_t i) const { return live.empty() || live[i] != 0; }
};

}  // namespace kvconform
