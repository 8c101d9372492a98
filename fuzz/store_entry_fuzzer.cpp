// libFuzzer target: a file in the regression store is read as the entry of an implementation and property (both
// picked by the first bytes), checked as a gate checks it, and replayed; nothing but a clear refusal may happen.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <string>

#include "properties/runners/builtin.h"
#include "properties/runners/store.h"
#include "properties/trace/kind_spec.h"
#include "properties/trace/trace_json.h"

namespace kv = kvconform;

namespace {
/// Fuzz speed, not a limit of the format: replays of large caches or long traces are skipped.
constexpr double max_cells = 4096;
constexpr std::size_t max_ops = 64, max_drive_size = 32;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const auto& impls = kv::builtin_implementations();
  const kv::implementation& impl = impls[in.ConsumeIntegralInRange<std::size_t>(0, impls.size() - 1)];
  const auto properties = kv::properties_of(impl.kind);
  const kv::property& p = *properties[in.ConsumeIntegralInRange<std::size_t>(0, properties.size() - 1)];
  const std::string text = in.ConsumeRemainingBytesAsString();
  kv::stored_trace entry;
  try {
    entry = kv::regression_store::parse_entry(text, "store/" + impl.name + "/" + p.name + "-0.json", impl, p);
  } catch (const kv::trace_format_error&) {
    return 0;  // a clear refusal
  }
  const kv::trace& t = entry.t;
  if (kv::spec_of(t.config.kind).cells(t.config) > max_cells || t.ops.size() > max_ops || t.drive_size > max_drive_size)
    return 0;
  (void)kv::check_trace(&p, t, impl);  // a mutant may fail: only a crash is a finding here
  return 0;
}
