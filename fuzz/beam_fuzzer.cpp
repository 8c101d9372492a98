// libFuzzer target: differential fuzzing of the beam kind (implementation vs model and oracle).
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return kvconform::fuzz::run_input(kvconform::cache_kind::beam, data, size);
}
