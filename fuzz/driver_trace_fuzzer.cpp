// libFuzzer target: a driver's trace (its seed and size) is parsed, checked as a replay checks it, and its driver
// reruns on the kind's reference, which must pass whatever seed and size it gets.
#include <cstdint>
#include <iostream>
#include <string>

#include "properties/runners/builtin.h"
#include "properties/runners/store.h"
#include "properties/trace/kind_spec.h"
#include "properties/trace/trace_json.h"

namespace kv = kvconform;

namespace {
/// Fuzz speed, not a limit of the format: a driver runs a generation loop of `size` steps over
/// the whole cache, so only small caches and sizes are rerun.
constexpr double max_cells = 4096;
constexpr std::size_t max_drive_size = 32;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kv::trace t;
  try {
    t = kv::trace_from_json(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const kv::trace_format_error&) {
    return 0;  // a clear refusal
  }
  if (!t.drive_seed) return 0;  // plain traces are the trace_json and kind targets' inputs
  const kv::implementation& ref = *kv::find_implementation(kv::to_string(t.config.kind));
  const kv::property* p = nullptr;
  try {
    p = kv::replay_property(t, ref, "input");
  } catch (const kv::trace_format_error&) {
    return 0;
  }
  if (kv::spec_of(t.config.kind).cells(t.config) > max_cells || t.drive_size > max_drive_size) return 0;
  const kv::verdict v = kv::check_trace(p, t, ref);
  if (v.ok()) return 0;
  std::cerr << kv::to_json(t) << "the reference failed its driver: " << v.fail->message << "\nkvconform-fuzz: driver "
            << p->name << " " << v.fail->check << " at " << v.fail->op_name << std::endl;
  __builtin_trap();
}
