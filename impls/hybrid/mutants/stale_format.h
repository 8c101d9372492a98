// Mutant hybrid-reused-block-stale-format (docs/mutants.md): a block rounds rows to the formats of the group that
// took it first, as vLLM #47574's fp8 group read blocks a group of another dtype had freed back as NaN.
#pragma once

#include "impls/hybrid/formats.h"

namespace kvconform::mutants {

struct stale_format_rules : hybrid_rules {
  static constexpr bool reformat_on_take = false;
};
/// On the mixed-format reference (full bf16, sliding fp8), where a block's formats depend on its group.
using hybrid_stale_format =
    hybrid_grouped<formats::bf16, formats::bf16, formats::e4m3_scaled, formats::e4m3_scaled, stale_format_rules>;

}  // namespace kvconform::mutants
