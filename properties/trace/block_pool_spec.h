// The vocabulary the block-pool kinds (paged, prefix) share: sequences named by handle in a pool of blocks.
#pragma once

#include <span>

#include "properties/trace/kind_spec.h"

namespace kvconform {

/// A create and a release as the pools without prefix caching (paged, latent) have them.
inline constexpr op_spec pool_create{op_kind::create, 0,
                                     "a new, empty sequence; its handle is the count of create and fork ops before it"};
inline constexpr op_spec pool_release{op_kind::release, field_seq,
                                      "seq's blocks go back to the pool unless another table holds them"};
/// A fork and a decode of sequence seq, as every block-pool kind has them.
inline constexpr op_spec pool_fork{op_kind::fork, field_seq, "a new sequence sharing every block of seq"};
inline constexpr op_spec pool_decode{op_kind::decode, field_q | field_seq, "q 1-D of width d_k over seq's rows"};
inline constexpr op_spec pool_rollback{op_kind::rollback, field_seq | field_count,
                                       "drops seq's newest count steps: blocks past its end leave its table, a kept "
                                       "shared or registered block stays whole"};
/// Rows per block: every block-pool kind's config field after num_blocks (its capacity).
inline constexpr config_field block_size_field{"block_size", &cache_config::block_size, nullptr, "rows per block"};

/// What a pool with rollback does with the blocks past a sequence's new end (docs/kinds/paged.md).
inline constexpr policy_choice rollback_blocks_choices[] = {
    {"freed", "the blocks past the new end leave the table at once (last first, as a release)"},
    {"kept",
     "the table keeps them until the sequence's release: later appends write into them (a shared or registered one "
     "replaced first), a fork shares only the blocks that hold rows",
     "vLLM v1: rejected drafts only lower num_computed_tokens, req_to_blocks never shrinks"},
};
inline constexpr policy_spec rollback_blocks_policy{
    "rollback_blocks", "what a rollback does with the blocks past the new end", rollback_blocks_choices};

/// num_blocks x block_size x (d_k + d_v): the cells of a pool.
inline double pool_cells(const cache_config& c) { return rows_cells(c) * double(c.block_size); }

/// The spec of a block-pool kind: its ops, config fields and policies, no rule across fields, pool_cells.
constexpr kind_spec block_pool_spec(cache_kind kind, const char* name, const char* summary,
                                    std::span<const op_spec> ops, std::span<const config_field> config,
                                    std::span<const policy_spec> policies = {},
                                    std::string (*policy_rules)(const policy_set&) = nullptr) {
  return {kind, name, summary, ops, config, nullptr, pool_cells, 0x1p24, policies, policy_rules};
}

}  // namespace kvconform
