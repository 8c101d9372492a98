// The prefix reference's policy choices (docs/kinds/prefix.md "Policies"), and what each declares.
#pragma once

#include "impls/common/declaring.h"
#include "impls/prefix/prefix.h"

namespace kvconform {

struct prefix_all_but_last_rules : prefix_rules {
  static constexpr bool all_but_last = true;
};
struct prefix_all_but_last_block_rules : prefix_all_but_last_rules {
  static constexpr bool drop_last_hit = true;
};
struct prefix_registered_rules : prefix_rules {
  static constexpr prefix_duplicates duplicates = prefix_duplicates::registered;
};
struct prefix_adopted_rules : prefix_rules {
  static constexpr prefix_duplicates duplicates = prefix_duplicates::adopted;
};
struct prefix_leaf_rules : prefix_adopted_rules {
  static constexpr bool leaf_eviction = true;
};
struct prefix_one_queue_rules : prefix_rules {
  static constexpr bool one_queue = true;
};
struct prefix_kept_rules : prefix_rules {
  static constexpr bool keep_rolled_back = true;
};
/// vLLM v1's block pool before PR #42656: every choice it makes.
struct prefix_vllm_rules : prefix_rules {
  static constexpr bool all_but_last = true, one_queue = true, keep_rolled_back = true;
  static constexpr prefix_duplicates duplicates = prefix_duplicates::registered;
};
/// SGLang's RadixCache.
struct prefix_sglang_rules : prefix_leaf_rules {
  static constexpr bool all_but_last = true;
};

namespace policies {
inline constexpr policy all_but_last[] = {{"hit_limit", "all_but_last"}};
inline constexpr policy all_but_last_block[] = {{"hit_limit", "all_but_last_block"}};
inline constexpr policy registered[] = {{"duplicates", "registered"}};
inline constexpr policy adopted[] = {{"duplicates", "adopted"}};
inline constexpr policy leaf[] = {{"duplicates", "adopted"}, {"eviction", "leaf"}};
inline constexpr policy one_queue[] = {{"free_order", "one_queue"}};
inline constexpr policy kept[] = {{"rollback_blocks", "kept"}};
inline constexpr policy vllm_prefix[] = {{"hit_limit", "all_but_last"},
                                         {"duplicates", "registered"},
                                         {"free_order", "one_queue"},
                                         {"rollback_blocks", "kept"}};
inline constexpr policy sglang_prefix[] = {
    {"hit_limit", "all_but_last"}, {"duplicates", "adopted"}, {"eviction", "leaf"}};
}  // namespace policies

}  // namespace kvconform
