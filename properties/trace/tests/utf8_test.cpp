// valid_utf8: invalid bytes escaped, cuts only between characters, and nlohmann can always write the result.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "properties/trace/utf8.h"

namespace kv = kvconform;

namespace {
/// True when nlohmann (strict, as the reports use it) accepts `s` as a string.
bool writable(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}
}  // namespace

TEST(ValidUtf8, KeepsValidTextAndEscapesEveryInvalidByte) {
  EXPECT_EQ(kv::valid_utf8("plain\ttext\nü€😀"), "plain\ttext\nü€😀");
  EXPECT_EQ(kv::valid_utf8("a\xff"
                           "b"),
            "a\\xffb");
  EXPECT_EQ(kv::valid_utf8("\xc0\xaf"), "\\xc0\\xaf");                    // overlong "/"
  EXPECT_EQ(kv::valid_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(kv::valid_utf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(kv::valid_utf8("\xe2\x82"), "\\xe2\\x82");                    // a character cut short
  EXPECT_EQ(kv::valid_utf8("\x1b[31mred\r"), "\\x1b[31mred\\x0d");        // terminal escapes are not passed on
  EXPECT_FALSE(writable("a\xff"));
  EXPECT_TRUE(writable(kv::valid_utf8("a\xff")));
}

TEST(ValidUtf8, CutsOnlyBetweenCharactersWithinTheLimit) {
  const std::string euros = "€€€€€";  // 3 bytes each
  for (std::size_t max = 4; max < 16; ++max) {
    const std::string s = kv::valid_utf8(euros, max);
    EXPECT_LE(s.size(), max);
    ASSERT_GE(s.size(), 3u);
    EXPECT_EQ(s.substr(s.size() - 3), max >= 15 ? "€" : "...") << max;
    EXPECT_TRUE(writable(s)) << max;
  }
  EXPECT_EQ(kv::valid_utf8(euros, 15), euros);
  EXPECT_EQ(kv::valid_utf8(euros, 9), "€€...");
}

TEST(ValidUtf8, TailStartsAtACharacterBoundary) {
  const std::string text = "start " + std::string(10, 'x') + "€€€";
  EXPECT_EQ(kv::valid_utf8_tail(text, 10), "...€€");
  EXPECT_EQ(kv::valid_utf8_tail(text, 100), text);
  EXPECT_EQ(kv::valid_utf8_tail("ab\xff", 100), "ab\\xff");
  for (std::size_t max = 4; max < 20; ++max) {
    const std::string s = kv::valid_utf8_tail(text, max);
    EXPECT_LE(s.size(), max);
    EXPECT_TRUE(writable(s)) << max;
  }
}

TEST(ValidUtf8, RandomBytesAlwaysBecomeWritableTextWithinTheLimit) {
  std::mt19937 rng(17);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes(rng() % 64, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() % 4 == 0 ? 0x80 + rng() % 0x80 : rng() % 256);
    const std::size_t max = 4 + rng() % 40;
    const std::string head = kv::valid_utf8(bytes, max), tail = kv::valid_utf8_tail(bytes, max);
    EXPECT_LE(head.size(), max);
    EXPECT_LE(tail.size(), max);
    EXPECT_TRUE(writable(head) && writable(tail) && writable(kv::valid_utf8(bytes)));
  }
}
