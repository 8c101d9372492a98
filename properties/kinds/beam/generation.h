// Batched generation over a beam cache: greedy per row or beam search, through the cache and by recomputation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "properties/generate/generation.h"

namespace kvconform::kinds {

/// How a batched generation over a beam cache picks its next tokens: greedy per row (rows are
/// independent sequences with left-padded prompts), or a beam search of width B (rows are beams).
enum class search_mode { greedy, beam };

/// What a batched generation produced: each row's tokens (padding and prompt, then the N + 1
/// chosen), every pass's logits (B x vocab; beam scores follow from them), and how many
/// positions of one row had their K/V computed.
struct batch_generation {
  std::vector<std::vector<std::size_t>> tokens;
  std::vector<std::vector<double>> logits;
  std::size_t kv_computations = 0;
  std::string failure;  ///< why the run stopped early, if it did
};

/// N = `new_tokens` steps after a prompt of P positions: N + 1 passes, each decoding every layer
/// and choosing the next tokens, the first N of which are fed back. Through the session's cache:
/// a prefill, then one position per pass (after a reorder by the chosen beams, in beam search).
batch_generation generate_cached(session& s, const cache_config& c, std::uint64_t seed, std::size_t prompt,
                                 std::size_t new_tokens, search_mode mode);
/// The same decoding without reusing a cache: every pass computes the K/V of every position again
/// into a fresh cache of the same implementation, so a bit-for-bit match isolates the caching.
batch_generation generate_recomputed(const implementation& impl, const cache_config& c, std::uint64_t seed,
                                     std::size_t prompt, std::size_t new_tokens, search_mode mode);
/// Runs both and reports through `s` where they differ (tokens, logits bit for bit) or
/// where the K/V counts are not P + N (cached) and P + (P + 1) + ... + (P + N) (recomputed).
void compare_with_recompute(session& s, const cache_config& c, std::uint64_t seed, std::size_t prompt,
                            std::size_t new_tokens, search_mode mode);

}  // namespace kvconform::kinds
