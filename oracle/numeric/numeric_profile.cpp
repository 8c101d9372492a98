// Format facts and rounding used by the bound and by models that store in a narrower format.
#include "oracle/numeric/numeric_profile.h"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

namespace kvconform {

double unit_roundoff(precision p) {
  switch (p) {
    case precision::f64: return 0x1p-53;
    case precision::f32: return 0x1p-24;
    case precision::bf16: return 0x1p-8;
  }
  return 0x1p-53;
}

double smallest_normal(precision p) {
  return p == precision::f64 ? DBL_MIN : FLT_MIN;  // bf16 shares f32's exponent range
}

double round_to(precision p, double x) {
  if (p == precision::f64) return x;
  const float f = static_cast<float>(x);
  if (p == precision::f32 || std::isnan(f)) return f;
  // bf16 keeps the top 16 bits of the f32 pattern; round to nearest, ties to even.
  std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(bits & 0xffff0000u);
}

const char* to_string(precision p) {
  switch (p) {
    case precision::f64: return "f64";
    case precision::f32: return "f32";
    case precision::bf16: return "bf16";
  }
  return "?";
}

std::string numeric_profile::describe() const {
  std::string s = std::string("storage ") + to_string(storage) + ", working " + to_string(working);
  if (online_block) s += ", online block " + std::to_string(online_block);
  if (online_undeclared) s += ", online (undeclared block)";
  if (splits) s += ", split-K " + std::to_string(splits);
  if (u_p) s += ", P rounded";
  if (u_out) s += ", output rounded";
  s += flush_subnormals ? ", FTZ allowed" : ", no FTZ";
  return s;
}

}  // namespace kvconform
