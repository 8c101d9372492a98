// Mutant paged-block-index-u16 (docs/mutants.md): block numbers wrap at 2^16 where rows are addressed.
#pragma once

#include <cstdint>

#include "impls/paged/paged.h"

namespace kvconform::mutants {

/// The slot mapping keeps block numbers in a uint16_t: block 65536 addresses block 0's rows, so a
/// pool of more than 2^16 blocks writes and reads another block's rows once it hands out block 2^16.
struct block_index_u16_rules : paged_rules {
  static std::size_t block_start(std::size_t block, std::size_t block_size) {
    return std::size_t{static_cast<std::uint16_t>(block)} * block_size;
  }
};
using paged_block_index_u16 = basic_paged<block_index_u16_rules>;

}  // namespace kvconform::mutants
