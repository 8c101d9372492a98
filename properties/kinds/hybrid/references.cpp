// The built-in hybrid references: the f64 groups, fp8 in every group, and bf16 with an fp8 sliding group
// (docs/kinds/hybrid.md).
#include "impls/hybrid/declared.h"
#include "impls/hybrid/formats.h"
#include "impls/hybrid/hybrid.h"
#include "properties/kinds/hybrid/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> hybrid_references() {
  return {
      reference<hybrid>("hybrid",
                        "full, sliding, shared and cross layers over one block pool with fork and copy-on-write; "
                        "double, two-pass softmax"),
      reference<hybrid_stored<formats::e4m3_scaled>>("hybrid-e4m3",
                                                     "hybrid, vLLM-style fp8 e4m3 with per-tensor scales, "
                                                     "saturating, in every group"),
      reference<hybrid_grouped<formats::bf16, formats::bf16, formats::e4m3_scaled, formats::e4m3_scaled>>(
          "hybrid-bf16-sliding-e4m3",
          "hybrid, full and cross groups in bf16, the sliding group in fp8 e4m3 with per-tensor scales (vLLM #47574)"),
      reference<hybrid_gpt_oss>("hybrid-gpt-oss", "hybrid, gpt-oss-style: sliding and full layers with learned sinks"),
  };
}

}  // namespace kvconform::kinds
