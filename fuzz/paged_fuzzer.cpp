// libFuzzer target: differential fuzzing of the paged kind (implementation vs model and oracle).
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return kvconform::fuzz::run_input(kvconform::cache_kind::paged, data, size);
}
