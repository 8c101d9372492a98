// Mutant latent-stale-block-rows (docs/mutants.md): a decode attends every slot of the sequence's last block, the
// rows of the block's previous holder among them (vLLM #37530: MLA blocks skipped by the zeroing step).
#pragma once

#include "impls/latent/latent.h"

namespace kvconform::mutants {

struct stale_block_rows_rules : latent_rules {
  static std::size_t attended(std::size_t /*rows*/, std::size_t table_slots) { return table_slots; }
};
using latent_stale_block_rows = basic_latent<stale_block_rows_rules>;

}  // namespace kvconform::mutants
