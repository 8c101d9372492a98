// A tiny deterministic decoder (fixed random weights, greedy) that drives caches like a generation loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "properties/executor/executor.h"

namespace kvconform {

/// Token t has a fixed key, value and query row (no positional term, so earlier keys never
/// change); the next token is the argmax of fixed output weights applied to the attention output.
/// Queries are d_q wide and the output weights read d_o values (default d_k and d_v: one head);
/// a multi-layer, multi-head cache slices these rows per layer and head.
class tiny_decoder {
 public:
  tiny_decoder(std::size_t vocab, std::size_t d_k, std::size_t d_v, std::uint64_t seed, std::size_t d_q = 0, std::size_t d_o = 0);
  std::vector<double> key(std::size_t token) const { return row(keys_, token, d_k_); }
  std::vector<double> value(std::size_t token) const { return row(values_, token, d_v_); }
  std::vector<double> query(std::size_t token) const { return row(queries_, token, d_q_); }
  /// One logit per token from an attention output of width d_o.
  std::vector<double> logits(const std::vector<double>& attention_output) const;
  /// Greedy choice from an attention output of width d_o.
  std::size_t next(const std::vector<double>& attention_output) const;
  std::size_t vocab() const { return vocab_; }

 private:
  static std::vector<double> row(const std::vector<double>& m, std::size_t r, std::size_t w) {
    return {m.begin() + static_cast<std::ptrdiff_t>(r * w), m.begin() + static_cast<std::ptrdiff_t>((r + 1) * w)};
  }
  std::size_t vocab_, d_k_, d_v_, d_q_, d_o_;
  std::vector<double> keys_, values_, queries_, out_;
};

/// Runs a generation loop through `s`: a prefill of `prompt` tokens as one 2-D append, then
/// up to `new_tokens` steps of decode (query of the last token), greedy choice, and a 1-D
/// append of the chosen token. Stops at the first refused append or failure. Returns the
/// number of generated tokens that were appended.
std::size_t drive_generation(session& s, const cache_config& c, std::uint64_t seed, std::size_t prompt, std::size_t new_tokens);

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

}  // namespace kvconform
