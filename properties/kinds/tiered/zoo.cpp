// The tiered zoo: mutants after this year's offload reports, and the policy variants (docs/mutants.md).
#include "impls/tiered/mutants/tiered_bugs.h"
#include "impls/tiered/policies.h"
#include "properties/kinds/tiered/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

namespace {
/// The policies (docs/kinds/tiered.md): each choice declared and made, declared and not made, made undeclared.
std::vector<implementation> policy_zoo() {
  return {
      variant<declaring<basic_tiered<tiered_fifo_rules>, policies::fifo>>(
          "tiered-fifo", "transfers complete in order per direction (vLLM's offloading connector)"),
      mutant<declaring<tiered, policies::fifo>>("tiered-declared-fifo-any-order", "tiered_round_trip_exact",
                                                "declares completion_order=fifo, completes in any order"),
      mutant<basic_tiered<tiered_fifo_rules>>("tiered-undeclared-fifo", "tiered_round_trip_exact",
                                              "refuses out-of-order completions, undeclared"),
      variant<declaring<basic_tiered<tiered_abort_rules>, policies::abort_on_fail>>(
          "tiered-load-failure-abort", "a failed load releases its sequence (vLLM's default)"),
      mutant<declaring<tiered, policies::abort_on_fail>>("tiered-declared-abort-recomputes",
                                                         "tiered_failed_load_recomputes",
                                                         "declares load_failure=abort, recomputes"),
      mutant<basic_tiered<tiered_abort_rules>>("tiered-undeclared-abort", "tiered_failed_load_recomputes",
                                               "releases on a failed load, undeclared"),
      variant<declaring<basic_tiered<tiered_device_absent_rules>, policies::device_absent>>(
          "tiered-host-eviction-device-absent", "host entries evicted only once off the device (SGLang)"),
      mutant<declaring<tiered, policies::device_absent>>("tiered-declared-device-absent-evicts-any",
                                                         "tiered_transfer_blocks_held",
                                                         "declares host_eviction=device_absent, evicts any"),
      mutant<basic_tiered<tiered_device_absent_rules>>("tiered-undeclared-device-absent", "tiered_transfer_blocks_held",
                                                       "keeps host entries still on the device, undeclared"),
      variant<declaring<basic_tiered<tiered_vllm_rules>, policies::vllm_tiered>>(
          "tiered-vllm", "every choice vLLM's offloading connector and block pool make"),
      variant<declaring<basic_tiered<tiered_sglang_rules>, policies::sglang_tiered>>(
          "tiered-sglang", "every choice SGLang's HiCache makes that the kind states"),
  };
}
}  // namespace

std::vector<implementation> tiered_zoo() {
  using namespace mutants;
  std::vector<implementation> all = {
      mutant<tiered_store_unwritten>("tiered-store-reads-unwritten", "tiered_store_reads_written_rows",
                                     "a store begins before its rows are written (vLLM #45704)"),
      mutant<tiered_reuse_pending_source>("tiered-reuse-pending-source", "tiered_transfer_blocks_held",
                                          "a pending store's sources go back to the pool (vLLM #46951)"),
      mutant<tiered_load_source_unpinned>("tiered-load-source-unpinned", "tiered_transfer_blocks_held",
                                          "a load pins nothing on host (SGLang PR #27444)"),
      mutant<tiered_room_ignores_pins>("tiered-room-ignores-pins", "tiered_transfer_blocks_held",
                                       "making room evicts entries loads are reading (SGLang PR #27631)"),
      mutant<tiered_packed_split>("tiered-packed-split-at-d-v", "tiered_round_trip_exact",
                                  "a packed row split at d_v (LMCache #4463)"),
      mutant<tiered_layout_transposed>("tiered-layout-transposed", "tiered_round_trip_exact",
                                       "a tier block read row-interleaved (TensorRT-LLM #6507)"),
      mutant<tiered_overlap_device_hit>("tiered-overlap-device-hit", "tiered_no_double_hit",
                                        "a load writes the device hit's blocks again (LMCache #2206)"),
      mutant<tiered_consumed_before_load>("tiered-consumed-before-load", "tiered_load_consumed_after_complete",
                                          "loading rows readable at once (LMCache #4133)"),
      mutant<tiered_fail_keeps_length>("tiered-failed-load-keeps-length", "tiered_failed_load_recomputes",
                                       "a failed load keeps the loaded length (vLLM #49250)"),
      mutant<tiered_pending_entry_evictable>("tiered-pending-entry-evictable", "tiered_block_accounting",
                                             "a store's pending entry evictable (SGLang PR #28468)"),
      mutant<tiered_failed_store_leaks>("tiered-failed-store-leaks-slot", "tiered_block_accounting",
                                        "a failed store keeps its slot (vLLM PR #48102)"),
  };
  for (implementation& i : policy_zoo()) all.push_back(std::move(i));
  return all;
}

}  // namespace kvconform::kinds
