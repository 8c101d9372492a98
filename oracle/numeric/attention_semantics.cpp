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
  return s;
}

std::string check(const attention_semantics& a) {
  if (a.window != window_kind::none && a.span == 0) return "window: a window of 0 rows reads nothing";
  if (a.window == window_kind::none && a.span != 0) return "window: a span without a window";
  if (!(a.softcap >= 0) || !std::isfinite(a.softcap)) return "softcap: expected a positive finite number (0: none)";
  return "";
}

}  // namespace kvconform
