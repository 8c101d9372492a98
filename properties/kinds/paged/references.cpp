// The built-in paged references: the f64 block pool and its fp8 storage (docs/kinds/paged.md).
#include "impls/paged/declared.h"
#include "impls/paged/paged.h"
#include "properties/kinds/paged/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> paged_references() {
  return {
      reference<paged>("paged", "block pool with fork, copy-on-write and preemption; double, two-pass softmax"),
      reference<paged_stored<formats::e4m3_scaled>>("paged-e4m3",
                                                    "paged, vLLM-style fp8 e4m3 with per-tensor "
                                                    "scales, saturating"),
      reference<paged_declared<declared::learned_sinks>>("paged-gpt-oss",
                                                         "paged, gpt-oss-style learned sinks on every head"),
  };
}

}  // namespace kvconform::kinds
