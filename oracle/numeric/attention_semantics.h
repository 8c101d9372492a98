// The attention a cache's decode computes, declared beside its numeric profile (docs/numerics.md §7).
#pragma once

#include <cstddef>
#include <string>

#include "oracle/numeric/storage_format.h"

namespace kvconform {

/// Learned sinks (docs/numerics.md §7.1): none, or one logit per query head that joins the softmax's normaliser and
/// carries no value, given with each decode (the op field `sinks`). Not the ring's kept rows, which are keys.
enum class sink_kind : unsigned char { none, learned };
/// Which rows below it a query at position p reads (docs/numerics.md §7.2): all of them; the last W
/// (p - W < r <= p, the query's own row counted); or those of its own chunk of C positions (r / C = p / C).
enum class window_kind : unsigned char { none, sliding, chunked };

struct attention_semantics {
  sink_kind sinks = sink_kind::none;
  window_kind window = window_kind::none;
  std::size_t span = 0;  ///< W of a sliding window, C of a chunked one
  double softcap = 0;    ///< c > 0: every score s becomes c tanh(s / c) before the softmax (§7.3); 0: none
  /// Sparse top-k (§7.4): K > 0 attends only the K visible rows of highest index score; 0: every visible row.
  std::size_t top_k = 0;
  /// The indexer: its query heads and their width (the width of every stored index key), and the format its index
  /// keys are stored in: an element format, with a scale per row when `index_row_scaled` (amax / max finite, in f32).
  std::size_t index_heads = 0, index_width = 0;
  element_format index_element = element_format::f64;
  bool index_row_scaled = false;

  /// Whether the query at position p reads the row at position r (r <= p: rows after the query are the causal
  /// mask's, not the window's).
  constexpr bool sees(std::size_t p, std::size_t r) const {
    if (r > p) return false;
    if (window == window_kind::sliding) return p - r < span;
    if (window == window_kind::chunked) return r / span == p / span;
    return true;
  }
  constexpr bool plain() const {
    return sinks == sink_kind::none && window == window_kind::none && softcap == 0 && top_k == 0;
  }
  /// In words, for `list` and reports: "learned sinks, chunked 8, softcap 30, top-4 by a 2x8 e4m3 row-scaled index";
  /// "plain" when nothing is declared.
  std::string describe() const;
  /// The window's text form: "none", "sliding W" or "chunked C".
  std::string window_text() const;
  /// The index keys' format in words: "f64", "e4m3 row-scaled".
  std::string index_text() const;
  friend constexpr bool operator==(const attention_semantics&, const attention_semantics&) = default;
};

/// What is wrong with declared semantics ("" when they are valid): a window of 0 rows, a cap that is not a
/// positive finite number, an indexer without heads or width, or one declared without top-k.
std::string check(const attention_semantics& a);

}  // namespace kvconform
