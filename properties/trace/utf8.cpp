// Valid UTF-8 for every report: invalid bytes escaped, text cut only between characters.
#include "properties/trace/utf8.h"

#include <vector>

namespace kvconform {

namespace {
/// The length of the well-formed UTF-8 sequence at text[i] (Unicode Table 3-7), or 0.
std::size_t sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char b = byte(0);
  if (b < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b >= 0xC2 && b <= 0xDF)
    n = 2;
  else if (b == 0xE0)
    n = 3, lo = 0xA0;
  else if (b == 0xED)
    n = 3, hi = 0x9F;  // no surrogates
  else if (b >= 0xE1 && b <= 0xEF)
    n = 3;
  else if (b == 0xF0)
    n = 4, lo = 0x90;
  else if (b == 0xF4)
    n = 4, hi = 0x8F;  // nothing above U+10FFFF
  else if (b >= 0xF1 && b <= 0xF3)
    n = 4;
  else
    return 0;
  if (i + n > text.size() || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(k) < 0x80 || byte(k) > 0xBF) return 0;
  return n;
}

/// Calls `emit(piece)` for each character of `text` in order: a well-formed sequence as it is,
/// anything else escaped; stops when `emit` returns false.
template <class Emit>
void for_each_piece(std::string_view text, Emit&& emit) {
  static const char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_length(text, i);
    const auto b = static_cast<unsigned char>(text[i]);
    const bool control = n == 1 && (b < 0x20 || b == 0x7F) && b != '\n' && b != '\t';
    const char escaped[] = {'\\', 'x', digits[b >> 4], digits[b & 15]};
    const bool go = n == 0 || control ? emit(std::string_view(escaped, 4)) : emit(text.substr(i, n));
    if (!go) return;
    i += n == 0 || control ? 1 : n;
  }
}
}  // namespace

std::string valid_utf8(std::string_view text, std::size_t max_bytes) {
  const std::size_t room = max_bytes > 3 ? max_bytes - 3 : 0;  // what a cut text keeps before "..."
  std::string out;
  std::size_t keep = 0;  // the length of `out` that fits in `room`
  bool cut = false;
  for_each_piece(text, [&](std::string_view piece) {
    if (out.size() + piece.size() > max_bytes) return !(cut = true);
    out += piece;
    if (out.size() <= room) keep = out.size();
    return true;
  });
  if (!cut) return out;
  out.resize(keep);
  return out + "...";
}

std::string valid_utf8_tail(std::string_view text, std::size_t max_bytes) {
  // Look at a little more than the tail (escapes are longer than the bytes they stand for, and a
  // character may have started before it), then keep whole characters from the end.
  const std::size_t look = max_bytes + 4;
  const bool longer = text.size() > look;
  std::vector<std::string> all;
  for_each_piece(longer ? text.substr(text.size() - look) : text, [&](std::string_view piece) {
    all.emplace_back(piece);
    return true;
  });
  if (longer && !all.empty()) all.erase(all.begin());  // perhaps the middle of a character
  std::size_t total = 0;
  for (const std::string& p : all) total += p.size();
  const bool cut = text.size() > max_bytes || total > max_bytes;
  const std::size_t room = cut ? (max_bytes > 3 ? max_bytes - 3 : 0) : max_bytes;
  std::size_t first = all.size(), kept = 0;
  while (first > 0 && kept + all[first - 1].size() <= room) kept += all[--first].size();
  std::string out = cut ? "..." : "";
  for (std::size_t i = first; i < all.size(); ++i) out += all[i];
  return out;
}

}  // namespace kvconform
