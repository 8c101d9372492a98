// One attention decode as the oracle sees it: exactly the keys, values and query consumed.
#pragma once

#include <cstddef>
#include <vector>

#include "oracle/numeric/shared_doubles.h"

namespace kvconform {

/// Inputs of one decode of one (query) head, already rounded to the implementation's storage
/// format. `live` is empty when every key takes part; otherwise 0 marks a masked key, whose
/// weight must be exactly 0.
struct attention_problem {
  std::size_t n = 0, d_k = 0, d_v = 0;
  shared_doubles keys;    ///< n x d_k, row-major (a prefill's problems share one block)
  shared_doubles values;  ///< n x d_v, row-major
  std::vector<double> q;  ///< d_k
  std::vector<unsigned char> live;

  bool is_live(std::size_t i) const { return live.empty() || live[i] != 0; }
};

}  // namespace kvconform
