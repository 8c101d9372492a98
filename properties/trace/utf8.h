// Text from outside (a port's output, file names, messages) made safe for JSON, JUnit, the store and the terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kvconform {

/// `text` as valid UTF-8 that every report can carry: each byte that is not part of a well-formed
/// UTF-8 sequence (overlong forms, surrogates and code points above U+10FFFF included) and each
/// control character other than newline and tab becomes the four characters `\xNN`. When the
/// result would exceed `max_bytes`, it is cut at a character boundary and ends with "...". Every
/// string that goes into a JSON or JUnit report, a stored trace or the terminal passes here, so
/// no output of a port can make a report invalid or abort a run.
std::string valid_utf8(std::string_view text, std::size_t max_bytes = std::string_view::npos);

/// The end of `text` as valid_utf8 makes it, at most `max_bytes` long and starting at a character
/// boundary, with "..." in front when it was cut (the tail of a port's stderr).
std::string valid_utf8_tail(std::string_view text, std::size_t max_bytes);

}  // namespace kvconform
