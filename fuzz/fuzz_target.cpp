// The shared body of the per-kind fuzz targets.
#include "fuzz/fuzz_target.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "fuzz/byte_trace.h"
#include "properties/executor/executor.h"
#include "properties/runners/builtin.h"
#include "properties/trace/trace_json.h"

namespace kvconform::fuzz {

namespace {
/// $KVCONFORM_FUZZ_IMPL, or else the reference the input's format byte chose.
const implementation& target_implementation(cache_kind kind, const std::string& chosen) {
  const char* name = std::getenv("KVCONFORM_FUZZ_IMPL");
  const implementation* impl = find_implementation(name && *name ? name : chosen);
  if (!impl || impl->kind != kind) {
    std::cerr << "kvconform-fuzz: no " << to_string(kind) << " implementation named \"" << (name ? name : "") << "\"\n";
    std::exit(2);
  }
  return *impl;
}

}  // namespace

int run_input(cache_kind kind, const std::uint8_t* data, std::size_t size) {
  trace t = decode_bytes(kind, data, size);
  const implementation& impl = target_implementation(kind, t.implementation);
  const verdict v = run_trace(t, impl);
  if (v.ok()) return 0;
  // A config or op the implementation does not support is NOT SUPPORTED (docs/design.md §4.5), as in the gate and in
  // replay: no finding, and no input for this target either, so libFuzzer keeps it out of the corpus.
  if (v.fail->check == "not-supported") return -1;
  const failure& f = *v.fail;
  t.implementation = impl.name;
  t.ops.resize(f.op_index + 1);  // ops after the divergence never ran
  t.note = f.signature() + ": " + f.message;
  const char* dir = std::getenv("KVCONFORM_FUZZ_ARTIFACTS");
  const std::string path = std::string(dir && *dir ? dir : ".") + "/kvconform-" + to_string(kind) + "-" +
                           content_hash(f.signature()) + ".json";  // one file per bug, not per input
  std::cerr << "\n" << describe(t.config) << ", " << t.ops.size() << " ops:\n";
  for (std::size_t i = 0; i < t.ops.size(); ++i) std::cerr << "  " << i << "  " << describe(t.ops[i]) << "\n";
  std::cerr << "implementation " << impl.name << " diverged from the model at op " << f.op_index << ": " << f.message
            << "\n";
  try {
    save_trace(t, path);
    std::cerr << "trace: " << path << "\nreplay: kvconform replay " << path << "\n";
  } catch (const std::exception& e) {
    std::cerr << "could not write the trace: " << e.what() << "\n";
  }
  std::cerr << "kvconform-fuzz: " << to_string(kind) << " " << f.check << " at " << f.op_name << std::endl;
  __builtin_trap();
}

}  // namespace kvconform::fuzz
