// The layer layout of a hybrid cache (docs/kinds/hybrid.md): what its constructor is given besides the pool.
#pragma once

#include <cstddef>

namespace kvconform {

/// Decoder layers 0 .. layers - 1, then one cross-attention layer when `cross` > 0. The last `shared` decoder
/// layers write nothing and read an earlier layer's rows; the others write. With `window` W > 0 a layer is
/// sliding (the first `keep` rows and the last W - keep) unless `global_every` P > 0 and (layer + 1) % P == 0,
/// which keeps every row; with W = 0 every layer keeps every row. docs/kinds/hybrid.md says which layer a
/// shared one reads.
struct hybrid_layers {
  std::size_t layers = 1, window = 0, keep = 0, global_every = 0, shared = 0, cross = 0;
};

/// The block groups of a hybrid cache: the writing layers of one attention type share a block table.
enum class hybrid_group : unsigned char { full, sliding, cross };
inline constexpr std::size_t hybrid_groups = 3;

}  // namespace kvconform
