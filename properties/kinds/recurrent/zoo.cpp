// The recurrent zoo: mutants after this year's reports on recurrent state, and the valid variants (docs/mutants.md).
#include "impls/common/declaring.h"
#include "impls/recurrent/mutants/recurrent_bugs.h"
#include "impls/recurrent/variants.h"
#include "properties/kinds/recurrent/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

namespace {
struct all_but_last_rules : recurrent_rules {
  static constexpr bool all_but_last = true;
};
inline constexpr kvconform::policy all_but_last_policy[] = {{"hit_limit", "all_but_last"}};
}  // namespace

std::vector<implementation> recurrent_zoo() {
  using namespace mutants;
  return {
      mutant<recurrent_reads_first_position>("recurrent-reads-first-position", "recurrent_rollback_restores",
                                             "the step after an accepting round reads column 0 (vLLM #39273)"),
      mutant<recurrent_rollback_no_op>("recurrent-rollback-no-op", "recurrent_rollback_restores",
                                       "a rollback keeps the drafts' state and window (mlx-lm #846)"),
      mutant<recurrent_rollback_keeps_window>("recurrent-rollback-keeps-window", "recurrent_rollback_restores",
                                              "a rollback keeps the drafts' window rows (mlx-lm PR #1486)"),
      mutant<recurrent_fork_wrong_cell>("recurrent-fork-wrong-cell", "recurrent_fork_isolated",
                                        "a fork copies another sequence's state (llama.cpp PR #20075)"),
      mutant<recurrent_publish_before_accept>("recurrent-publish-before-accept", "recurrent_checkpoint_after_accept",
                                              "checkpoints published before the drafts are accepted (vLLM #53912)"),
      mutant<recurrent_checkpoint_from_running_slot>(
          "recurrent-checkpoint-from-running-slot", "recurrent_checkpoint_after_accept",
          "a boundary's checkpoint holds the state at the step's end (SGLang #36537)"),
      mutant<recurrent_resume_shares_checkpoint>("recurrent-resume-shares-checkpoint", "recurrent_hit_resumes_as_miss",
                                                 "a resumed sequence writes into its checkpoint (vLLM PR #57908)"),
      mutant<recurrent_hit_past_attention_blocks>(
          "recurrent-hit-past-attention-blocks", "recurrent_groups_agree",
          "the hit is the state's checkpoint though an attention block below it is missing (vLLM PR #46281)"),
      mutant<recurrent_hit_past_state>("recurrent-hit-past-state", "recurrent_groups_agree",
                                       "the attention blocks' hit is kept with no checkpoint, the state empty "
                                       "(vLLM #43090)"),
      mutant<recurrent_float_state>("recurrent-float-state-declared-double", "recurrent_state_within_bound",
                                    "float state and arithmetic in a cache declared double"),
      mutant<declaring<recurrent, all_but_last_policy>>("recurrent-declared-all-but-last-hits-all",
                                                        "recurrent_hit_resumes_as_miss",
                                                        "declares hit_limit=all_but_last, resumes from all"),
      mutant<basic_recurrent<all_but_last_rules>>("recurrent-undeclared-all-but-last", "recurrent_hit_resumes_as_miss",
                                                  "resumes from all but the last token, undeclared"),
      variant<variants::recurrent_bf16_state>("recurrent-bf16-state",
                                              "the state rounded to bf16 after every step, declared"),
      variant<variants::recurrent_vllm>("recurrent-vllm",
                                        "checkpoints only where a step ends on a block boundary, hits all but the last "
                                        "token (vLLM mamba_cache_mode=align)"),
  };
}

}  // namespace kvconform::kinds
