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
  tiny_decoder(std::size_t vocab, std::size_t d_k, std::size_t d_v, std::uint64_t seed, std::size_t d_q = 0,
               std::size_t d_o = 0);
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
std::size_t drive_generation(session& s, const cache_config& c, std::uint64_t seed, std::size_t prompt,
                             std::size_t new_tokens);

}  // namespace kvconform
