// Stream digests: the words of a stream, mixed and summed so that ports can compute them fast.
#include "properties/trace/digest.h"

#include <bit>
#include <vector>

namespace kvconform {

namespace {
constexpr std::uint64_t golden = 0x9E3779B97F4A7C15ull;

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

std::uint64_t digest_words(std::span<const std::uint64_t> words) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < words.size(); ++i) sum += mix(words[i] + (i + 1) * golden);
  return sum;
}

std::uint64_t stream_digest(const stream& s) {
  std::vector<std::uint64_t> w = {s.rows(), s.d_k, s.d_v, s.positions.size()};
  w.reserve(4 + s.keys.size() + s.values.size() + s.positions.size());
  const auto add = [&](double x) { w.push_back(std::bit_cast<std::uint64_t>(x)); };
  s.keys.for_each(add), s.values.for_each(add);
  for (std::int64_t p : s.positions) w.push_back(static_cast<std::uint64_t>(p));
  return digest_words(w);
}

std::string digest_hex(std::uint64_t d) {
  static const char digits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, d >>= 4) s[static_cast<std::size_t>(i)] = digits[d & 15];
  return s;
}

}  // namespace kvconform
