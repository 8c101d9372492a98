// libFuzzer target of one cache kind (KVCONFORM_FUZZ_KIND, set per target by fuzz/CMakeLists.txt): implementation vs
// model and oracle.
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return kvconform::fuzz::run_input(kvconform::cache_kind::KVCONFORM_FUZZ_KIND, data, size);
}
