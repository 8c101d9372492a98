// Names, the stable text form, validation and the memory formula of storage formats (docs/numerics.md §6).
#include "oracle/numeric/storage_format.h"

#include <cmath>
#include <sstream>
#include <vector>

namespace kvconform {

namespace {
const char* const element_names[] = {"f64", "f32", "fp16", "bf16", "e4m3", "e5m2"};
const char* const overflow_names[] = {"inf", "saturate", "nan"};

/// e4m3 has no infinity: its IEEE-like default is NaN.
overflow_rule default_overflow(element_format e) {
  return e == element_format::e4m3 ? overflow_rule::nan : overflow_rule::infinity;
}

double element_bytes(element_format e) {
  static const double bytes[] = {8, 4, 2, 2, 1, 1};
  return bytes[static_cast<int>(e)];
}

bool parse_count(std::string_view word, std::string_view prefix, std::size_t& out) {
  if (word.substr(0, prefix.size()) != prefix || word.size() == prefix.size()) return false;
  std::size_t v = 0;
  for (char c : word.substr(prefix.size())) {
    if (c < '0' || c > '9' || v > (std::size_t{1} << 40)) return false;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  out = v;
  return true;
}

/// Applies one word of the text form to `f`; false when the word means nothing.
bool apply_word(std::string_view w, storage_format& f) {
  if (w == "int8" || w == "int4") return f.groups = true, f.bits = w == "int8" ? 8 : 4, true;
  if (w == "ftz") return f.subnormals = false, true;
  if (w == "scaled") return f.scaled = true, true;
  if (w == "token" || w == "channel") return f.axis = w == "token" ? group_axis::token : group_axis::channel, true;
  if (w == "sym" || w == "asym") return f.symmetric = w == "sym", true;
  for (int i = 0; i < 3; ++i)
    if (w == overflow_names[i]) return f.overflow = static_cast<overflow_rule>(i), true;
  if (parse_count(w, "g", f.group) || parse_count(w, "r", f.residual)) return true;
  for (auto [prefix, dst] : {std::pair{std::string_view("scale="), &f.scale_format}, {"res=", &f.element}})
    if (w.substr(0, prefix.size()) == prefix)
      if (const auto e = element_format_from_string(w.substr(prefix.size()))) return *dst = *e, true;
  return false;
}
}  // namespace

const char* to_string(element_format f) { return element_names[static_cast<int>(f)]; }

std::optional<element_format> element_format_from_string(std::string_view name) {
  for (int i = 0; i < 6; ++i)
    if (name == element_names[i]) return static_cast<element_format>(i);
  return std::nullopt;
}

std::string describe(const storage_format& f) {
  std::ostringstream s;
  if (f.groups) {
    s << "int" << f.bits << " g" << f.group << (f.axis == group_axis::token ? " token" : " channel")
      << (f.symmetric ? " sym" : " asym") << " scale=" << to_string(f.scale_format);
    if (f.residual) s << " r" << f.residual;
    if (f.element != element_format::f64) s << " res=" << to_string(f.element);
  } else {
    s << to_string(f.element);
    if (f.overflow != default_overflow(f.element)) s << ' ' << overflow_names[static_cast<int>(f.overflow)];
    if (f.scaled) s << " scaled";
  }
  if (!f.subnormals) s << " ftz";
  return s.str();
}

std::optional<storage_format> parse_storage_format(std::string_view text, std::string* error) {
  std::vector<std::string_view> words;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    if (end > at) words.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  storage_format f;
  bool explicit_overflow = false;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const auto e = i == 0 ? element_format_from_string(words[0]) : std::nullopt;
    if (e) {
      f.element = *e;
    } else if (!apply_word(words[i], f)) {
      if (error)
        *error = "unknown word \"" + std::string(words[i]) + "\" in storage format \"" + std::string(text) + "\"";
      return std::nullopt;
    }
    explicit_overflow = explicit_overflow || words[i] == "inf" || words[i] == "saturate" || words[i] == "nan";
  }
  if (words.empty()) {
    if (error) *error = "empty storage format";
    return std::nullopt;
  }
  if (!explicit_overflow) f.overflow = default_overflow(f.element);
  if (const std::string why = check(f); !why.empty()) {
    if (error) *error = why;
    return std::nullopt;
  }
  return f;
}

std::string check(const storage_format& f) {
  const std::string name = describe(f);
  if (f.element == element_format::e4m3 && f.overflow == overflow_rule::infinity)
    return name + ": e4m3 has no infinity; declare overflow nan or saturate";
  if (!f.groups) return "";
  if (f.bits != 4 && f.bits != 8) return name + ": integer groups have 4 or 8 bits";
  if (f.group == 0) return name + ": a group holds at least one value";
  if (f.scaled) return name + ": a per-tensor scale applies to element formats only";
  if (f.scale_format != element_format::f32 && f.scale_format != element_format::f16 &&
      f.scale_format != element_format::bf16)
    return name + ": group scales are stored in f32, fp16 or bf16";
  if (f.axis == group_axis::channel && f.residual % f.group != 0)
    return name + ": a per-channel residual is a whole number of groups";
  return "";
}

double stored_bytes(const storage_format& f, std::size_t rows, std::size_t width) {
  const double r = static_cast<double>(rows), w = static_cast<double>(width);
  if (!f.groups) return r * w * element_bytes(f.element);
  const double meta = element_bytes(f.scale_format) * (f.symmetric ? 1 : 2);
  const double g = static_cast<double>(f.group);
  if (f.axis == group_axis::token) return r * (std::ceil(w * f.bits / 8) + std::ceil(w / g) * meta);
  return std::ceil(r * w * f.bits / 8) + std::ceil(r / g) * w * meta;
}

}  // namespace kvconform
