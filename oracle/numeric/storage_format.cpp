// Names, the stable text form, validation and the memory formula of storage formats (docs/numerics.md §6).
#include "oracle/numeric/storage_format.h"

#include <cmath>
#include <optional>
#include <sstream>
#include <string>
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

/// A count of at most 2^40: digits only.
std::optional<std::size_t> count_of(std::string_view word) {
  if (word.empty() || word.size() > 13) return std::nullopt;
  std::size_t v = 0;
  for (char c : word) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  if (v > (std::size_t{1} << 40)) return std::nullopt;
  return v;
}

/// The formats a group scale (and minimum) is stored in.
std::optional<element_format> scale_format_of(std::string_view word) {
  const auto e = element_format_from_string(word);
  if (e == element_format::f32 || e == element_format::f16 || e == element_format::bf16) return e;
  return std::nullopt;
}

constexpr std::string_view first_words =
    "a storage format begins with an element format (f64, f32, fp16 or f16, bf16, e4m3, e5m2) or with int8 or int4";
constexpr std::string_view element_words = "after an element format come inf, saturate, nan, scaled, ftz";
constexpr std::string_view group_words =
    "after int8 or int4 come group N (gN), token, channel, symmetric (sym), asymmetric (asym), scale S (scale=S), "
    "residual N (rN), residual E (res=E), ftz";
constexpr std::string_view group_count_words = "group takes a count of values (group 32)";
constexpr std::string_view scale_words = "a scale is stored in f32, fp16 (f16) or bf16";
constexpr std::string_view residual_words =
    "residual takes a count of tokens or an element format (f64, f32, fp16, bf16, e4m3, e5m2)";

/// Reads the words of one storage format (docs/numerics.md §6 gives the grammar); parentheses group and mean nothing.
class format_reader {
 public:
  explicit format_reader(std::string_view text) : text_(text) {
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t end = std::min(text.find_first_of(" ()", at), text.size());
      if (end > at) words_.push_back(text.substr(at, end - at));
      at = end + 1;
    }
  }

  std::optional<storage_format> read(std::string& error) {
    if (words_.empty()) return error = "empty storage format", std::nullopt;
    storage_format f;
    bool explicit_overflow = false;
    if (const auto e = element_format_from_string(words_[0]))
      f.element = *e;
    else if (words_[0] == "int8" || words_[0] == "int4")
      f.groups = true, f.bits = words_[0] == "int8" ? 8 : 4;
    else
      return fail(error, first_words);
    while (++at_ < words_.size())
      if (!(f.groups ? group_word(f) : element_word(f, explicit_overflow))) return fail(error, why_);
    if (!explicit_overflow) f.overflow = default_overflow(f.element);
    return f;
  }

 private:
  std::optional<storage_format> fail(std::string& error, std::string_view why) const {
    const bool end = at_ >= words_.size();
    error = (end ? "storage format \"" + std::string(text_) + "\" ends after \"" + std::string(words_.back()) + "\""
                 : "unknown word \"" + std::string(words_[at_]) + "\" in storage format \"" + std::string(text_) +
                       "\"") +
            ": " + std::string(why);
    return std::nullopt;
  }
  bool refuse(std::string_view why) { return why_ = why, false; }
  std::string_view word() const { return at_ < words_.size() ? words_[at_] : std::string_view(); }

  bool element_word(storage_format& f, bool& explicit_overflow) {
    const std::string_view w = word();
    for (int i = 0; i < 3; ++i)
      if (w == overflow_names[i]) return f.overflow = static_cast<overflow_rule>(i), explicit_overflow = true, true;
    if (w == "scaled") return f.scaled = true, true;
    if (w == "ftz") return f.subnormals = false, true;
    return refuse(element_words);
  }

  bool group_word(storage_format& f) {
    const std::string_view w = word();
    if (w == "token" || w == "channel") return f.axis = w == "token" ? group_axis::token : group_axis::channel, true;
    if (w == "symmetric" || w == "sym" || w == "asymmetric" || w == "asym")
      return f.symmetric = w == "symmetric" || w == "sym", true;
    if (w == "ftz") return f.subnormals = false, true;
    if (w.size() > 1 && (w[0] == 'g' || w[0] == 'r'))
      if (const auto n = count_of(w.substr(1))) return (w[0] == 'g' ? f.group : f.residual) = *n, true;
    if (w.starts_with("scale="))
      if (const auto e = scale_format_of(w.substr(6))) return f.scale_format = *e, true;
    if (w.starts_with("res="))
      if (const auto e = element_format_from_string(w.substr(4))) return f.element = *e, true;
    if (w == "group" || w == "scale" || w == "residual") {  // a word that takes the next one
      ++at_;
      const std::string_view a = word();
      if (w == "group") return count_of(a) ? (f.group = *count_of(a), true) : refuse(group_count_words);
      if (w == "scale") return scale_format_of(a) ? (f.scale_format = *scale_format_of(a), true) : refuse(scale_words);
      if (const auto n = count_of(a)) return f.residual = *n, true;
      if (const auto e = element_format_from_string(a)) return f.element = *e, true;
      return refuse(residual_words);
    }
    return refuse(group_words);
  }

  std::string_view text_;
  std::vector<std::string_view> words_;
  std::size_t at_ = 0;
  std::string_view why_;
};
}  // namespace

const char* to_string(element_format f) { return element_names[static_cast<int>(f)]; }

std::optional<element_format> element_format_from_string(std::string_view name) {
  if (name == "f16") return element_format::f16;  // the long form's spelling (docs/numerics.md §6)
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
  std::string why;
  std::optional<storage_format> f = format_reader(text).read(why);
  if (f) why = check(*f);
  if (why.empty()) return f;
  if (error) *error = why;
  return std::nullopt;
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
