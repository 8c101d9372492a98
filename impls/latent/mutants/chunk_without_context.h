// Mutant latent-chunk-without-context (docs/mutants.md): a prefill's queries attend the rows of their own chunk only,
// not the rows held before it (vLLM #26042: MLA with chunked prefill wrong, worse with smaller chunks).
#pragma once

#include "impls/latent/latent.h"

namespace kvconform::mutants {

struct chunk_without_context_rules : latent_rules {
  static std::pair<std::size_t, std::size_t> prefill_rows(std::size_t before, std::size_t i) {
    return {before, before + i + 1};
  }
};
using latent_chunk_without_context = basic_latent<chunk_without_context_rules>;

}  // namespace kvconform::mutants
