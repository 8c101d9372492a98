// The tiered reference's policy choices (docs/kinds/tiered.md "Policies"), and what each declares.
#pragma once

#include "impls/common/declaring.h"
#include "impls/tiered/tiered.h"

namespace kvconform {

struct tiered_fifo_rules : tiered_rules {
  static constexpr bool fifo = true;
};
struct tiered_abort_rules : tiered_rules {
  static constexpr bool abort_on_fail = true;
};
struct tiered_device_absent_rules : tiered_rules {
  static constexpr bool device_absent = true;
};
/// vLLM's offloading connector over its block pool: one stream per direction, a failed load fails the request.
struct tiered_vllm_rules : tiered_rules {
  static constexpr bool fifo = true, abort_on_fail = true, all_but_last = true, one_queue = true;
  static constexpr prefix_duplicates duplicates = prefix_duplicates::registered;
};
/// SGLang's HiCache: host entries evicted only once off the device, duplicates adopted.
struct tiered_sglang_rules : tiered_rules {
  static constexpr bool device_absent = true, all_but_last = true;
  static constexpr prefix_duplicates duplicates = prefix_duplicates::adopted;
};

namespace policies {
inline constexpr policy fifo[] = {{"completion_order", "fifo"}};
inline constexpr policy abort_on_fail[] = {{"load_failure", "abort"}};
inline constexpr policy device_absent[] = {{"host_eviction", "device_absent"}};
inline constexpr policy vllm_tiered[] = {{"completion_order", "fifo"},
                                         {"load_failure", "abort"},
                                         {"hit_limit", "all_but_last"},
                                         {"duplicates", "registered"},
                                         {"free_order", "one_queue"}};
inline constexpr policy sglang_tiered[] = {
    {"host_eviction", "device_absent"}, {"hit_limit", "all_but_last"}, {"duplicates", "adopted"}};
}  // namespace policies

}  // namespace kvconform
