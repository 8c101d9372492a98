// libFuzzer target of one cache kind (KVCONFORM_FUZZ_KIND, set by fuzz/CMakeLists.txt) against its model.
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return kvconform::fuzz::run_input(kvconform::cache_kind::KVCONFORM_FUZZ_KIND, data, size);
}
