// Declared attention semantics in words, and their validity (docs/numerics.md §7).
#include "oracle/numeric/attention_semantics.h"

#include <cmath>
#include <sstream>

namespace kvconform {

std::string attention_semantics::window_text() const {
  switch (window) {
    case window_kind::none: return "none";
    case window_kind::sliding: return "sliding " + std::to_string(span);
    case window_kind::chunked: return "chunked " + std::to_string(span);
  }
  return "?";
}

std::string attention_semantics::index_text() const {
  return std::string(to_string(index_element)) + (index_row_scaled ? " row-scaled" : "");
}

std::string attention_semantics::describe() const {
  if (plain()) return "plain";
  std::string s;
  auto add = [&s](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (sinks == sink_kind::learned) add("learned sinks");
  if (window != window_kind::none) add(window_text());
  if (softcap > 0) {
    std::ostringstream c;
    c << "softcap " << softcap;
    add(c.str());
  }
  if (top_k > 0)
    add("top-" + std::to_string(top_k) + " by a " + std::to_string(index_heads) + "x" + std::to_string(index_width) +
        " " + index_text() + " index");
  return s;
}

std::string check(const attention_semantics& a) {
  if (a.window != window_kind::none && a.span == 0) return "window: a window of 0 rows reads nothing";
  if (a.window == window_kind::none && a.span != 0) return "window: a span without a window";
  if (!(a.softcap >= 0) || !std::isfinite(a.softcap)) return "softcap: expected a positive finite number (0: none)";
  if (a.top_k == 0 && (a.index_heads || a.index_width || a.index_row_scaled || a.index_element != element_format::f64))
    return "sparse: an indexer without top_k";
  if (a.top_k > 0 && (a.index_heads == 0 || a.index_width == 0))
    return "sparse: the indexer needs heads and width of at least 1";
  return "";
}

}  // namespace kvconform
