// Valid flat variants: the reference storage with a correct alternative decode, each declaring its numeric profile.
#pragma once

#include "impls/flat/flat.h"
#include "impls/flat/variants/decode_algorithms.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform::variants {

/// Online softmax with a declared block of 4 keys (n_r = ceil(n/4) - 1 rescales).
struct flat_online : flat {
  using basic_flat::basic_flat;
  static constexpr numeric_profile profile{.online_block = 4};
};
struct flat_exp2_fma : flat {
  using basic_flat::basic_flat;
};
struct flat_pairwise : flat {
  using basic_flat::basic_flat;
};
struct flat_reversed : flat {
  using basic_flat::basic_flat;
};
/// Split-K over 3 chunks (n_r = 2 combining rescales).
struct flat_split_k : flat {
  using basic_flat::basic_flat;
  static constexpr numeric_profile profile{.splits = 3};
};

inline decode_result decode_step(array_view q, const flat_online& c) {
  return decode_with(q, c, [](auto... a) { return attend_online<4>(a...); });
}
inline decode_result decode_step(array_view q, const flat_exp2_fma& c) {
  return decode_with(q, c, [](auto... a) { return attend_exp2_fma(a...); });
}
inline decode_result decode_step(array_view q, const flat_pairwise& c) {
  return decode_with(q, c, [](auto... a) { return attend_pairwise(a...); });
}
inline decode_result decode_step(array_view q, const flat_reversed& c) {
  return decode_with(q, c, [](auto... a) { return attend_reversed(a...); });
}
inline decode_result decode_step(array_view q, const flat_split_k& c) {
  return decode_with(q, c, [](auto... a) { return attend_split_k<3>(a...); });
}

}  // namespace kvconform::variants
