// libFuzzer target: RC_PARAMS is parsed strictly (only params_error may come out), and what it accepts reads
// back the same from its canonical form.
#include <cstdint>
#include <iostream>
#include <string>

#include "properties/cli/run_params.h"

namespace kv = kvconform;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  kv::rc_params p;
  try {
    p = kv::parse_rc_params(text);
  } catch (const kv::params_error&) {
    return 0;  // a clear refusal
  }
  std::string canonical;
  if (p.seed) canonical += "seed=" + std::to_string(*p.seed) + " ";
  if (p.max_success) canonical += "max_success=" + std::to_string(*p.max_success) + " ";
  if (p.max_size) canonical += "max_size=" + std::to_string(*p.max_size) + " ";
  if (p.noshrink) canonical += "noshrink=1";
  const kv::rc_params q = kv::parse_rc_params(canonical);
  if (q.seed != p.seed || q.max_success != p.max_success || q.max_size != p.max_size || q.noshrink != p.noshrink) {
    std::cerr << "accepted: " << text << "\ncanonical: " << canonical << "\nkvconform-fuzz: rc-params round-trip\n";
    __builtin_trap();
  }
  return 0;
}
