// The storage format a cache declares for its keys and for its values (docs/numerics.md §6).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kvconform {

/// Element formats with exact round-to-nearest-even from double (docs/numerics.md §6.1). e4m3 is
/// the "FN" variant (max 448, no infinity); e5m2 has infinity (max 57344).
enum class element_format : unsigned char { f64, f32, f16, bf16, e4m3, e5m2 };
/// What a value beyond the largest finite one becomes: infinity (IEEE), the largest finite
/// value of its sign, or NaN (e4m3, which has no infinity).
enum class overflow_rule : unsigned char { infinity, saturate, nan };
/// The axis a group of integers runs along: `token` = G consecutive values of one row (per-token
/// groups along d, llama.cpp's q8_0 blocks); `channel` = G consecutive tokens of one column
/// (per-channel groups along tokens, as KIVI quantizes keys).
enum class group_axis : unsigned char { token, channel };

/// One side's (keys' or values') storage format: an element format, optionally with a per-tensor
/// scale from the cache config (stored = round(x / scale), exposed = stored * scale), or integer
/// groups. Views always expose the values the cache attends over, as doubles.
struct storage_format {
  bool groups = false;  ///< false: an element format; true: integer groups
  /// The element format; for groups, the format of the residual rows kept unquantized.
  element_format element = element_format::f64;
  bool subnormals = true;  ///< false: a result below the smallest normal becomes zero of its sign
  overflow_rule overflow = overflow_rule::infinity;
  bool scaled = false;  ///< element formats: per-tensor scale from the config (k_scale, v_scale)
  unsigned bits = 8;    ///< groups: 8 or 4
  std::size_t group = 32;
  group_axis axis = group_axis::token;
  bool symmetric = true;  ///< scale = amax / qmax; else scale = (max - min) / qmax and zero = min
  element_format scale_format = element_format::f16;
  /// Groups: quantization is deferred by `residual` tokens: whenever R (> 0) unquantized tokens have
  /// gathered they are quantized together (KIVI's residual); with R = 0 a per-token row is quantized
  /// on arrival and a per-channel group when its G tokens are in.
  std::size_t residual = 0;

  friend constexpr bool operator==(const storage_format&, const storage_format&) = default;
  /// Whether stored values differ from their inputs at all (every format but plain f64).
  constexpr bool rounds() const { return groups || element != element_format::f64 || !subnormals || scaled; }
  /// Rows quantized together: 1 (on arrival), G (a per-channel group) or R (a residual).
  constexpr std::size_t chunk() const {
    if (!groups) return 1;
    if (residual) return residual;
    return axis == group_axis::channel ? group : 1;
  }
  /// Largest integer code: 2^(bits-1) - 1 symmetric (codes in [-qmax, qmax]), 2^bits - 1 otherwise (codes in [0,
  /// qmax]).
  constexpr unsigned qmax() const { return symmetric ? (1u << (bits - 1)) - 1 : (1u << bits) - 1; }
};

/// The formats kvconform's references use; a plug-in may declare any other combination.
namespace formats {
inline constexpr storage_format f64{};
inline constexpr storage_format f32{.element = element_format::f32};
inline constexpr storage_format fp16{.element = element_format::f16};
inline constexpr storage_format bf16{.element = element_format::bf16};
inline constexpr storage_format e4m3{.element = element_format::e4m3, .overflow = overflow_rule::nan};
inline constexpr storage_format e5m2{.element = element_format::e5m2};
/// vLLM-style fp8 KV cache: e4m3, saturating, with a per-tensor scale.
inline constexpr storage_format e4m3_scaled{
    .element = element_format::e4m3, .overflow = overflow_rule::saturate, .scaled = true};
/// llama.cpp q8_0: blocks of 32 int8 along d, symmetric, fp16 scale.
inline constexpr storage_format q8_0{.groups = true, .bits = 8, .group = 32};
/// llama.cpp q4_1: blocks of 32 int4 along d, with an fp16 scale and an fp16 minimum.
inline constexpr storage_format q4_1{.groups = true, .bits = 4, .group = 32, .symmetric = false};
/// KIVI-style int4 keys: per channel, groups of `g` tokens, asymmetric, fp16 scales, fp16 residual of `r` tokens.
constexpr storage_format kivi_keys(std::size_t g, std::size_t r) {
  return {.groups = true,
          .element = element_format::f16,
          .bits = 4,
          .group = g,
          .axis = group_axis::channel,
          .symmetric = false,
          .residual = r};
}
/// KIVI-style int4 values: per token, groups of `g` along d, asymmetric, fp16 scales, fp16 residual of `r` tokens.
constexpr storage_format kivi_values(std::size_t g, std::size_t r) {
  return {.groups = true, .element = element_format::f16, .bits = 4, .group = g, .symmetric = false, .residual = r};
}
}  // namespace formats

const char* to_string(element_format f);
/// The element format named "fp16" for f16 (also read as "f16").
std::optional<element_format> element_format_from_string(std::string_view name);
/// The short text form, stable and parseable: "f64", "fp16 ftz", "e4m3 saturate scaled",
/// "int4 g32 token asym scale=fp16 r8 res=fp16" (docs/numerics.md §6).
std::string describe(const storage_format& f);
/// Reads the short form and the long one ("int4 group 32 token asymmetric scale f16 residual 8 (residual fp16)"),
/// which mean the same; nullopt with `error` set otherwise: the word it stopped at and what it accepts there, or
/// what check() finds wrong.
std::optional<storage_format> parse_storage_format(std::string_view text, std::string* error = nullptr);
/// What is wrong with a declaration ("" when it is valid): bits not 4 or 8, a zero group, e4m3
/// overflowing to infinity, a per-channel residual that is not a multiple of the group, ...
std::string check(const storage_format& f);

/// Bytes `rows` rows of `width` values take in the format: element bytes, or packed codes plus
/// each group's scale (and minimum); per-channel groups count one group per G rows started.
double stored_bytes(const storage_format& f, std::size_t rows, std::size_t width);

}  // namespace kvconform
