// Fitting generated configs to declared storage formats (docs/numerics.md §6.5).
#include "properties/generate/format_configs.h"

#include <algorithm>
#include <cmath>

namespace kvconform {

double scale_of_code(std::uint64_t code) {
  code %= scale_codes;
  if (code == 0) return 1;  // code 0 is no scale, so that an unscaled config reads and writes as before
  return std::ldexp(1.0 + static_cast<double>(code % 128) / 128.0, static_cast<int>(code / 128) - 3);
}

std::uint64_t code_of_scale(double scale) {
  if (scale == 1) return 0;
  int e = 0;
  const double m = std::frexp(scale, &e);  // scale = m 2^e, m in [0.5, 1)
  const double k = (2 * m - 1) * 128;
  const int exp = e - 1 + 3;
  if (exp < 0 || exp >= 8 || k != std::floor(k)) return 0;
  return static_cast<std::uint64_t>(exp) * 128 + static_cast<std::uint64_t>(k);
}

namespace {
/// A width drawn for a double cache, mapped for per-token groups of g: short, full, full plus a
/// part, two full, two and a half (the quick set 1, 2, 3, 4, 8, 16; deep widths stay as drawn).
std::size_t group_width(std::size_t w, std::size_t g) {
  switch (w) {
    case 1: return std::max<std::size_t>(1, g / 4);
    case 2: return g / 2 + 1;
    case 3: return g;
    case 4: return g + 3;
    case 8: return 2 * g;
    case 16: return 2 * g + g / 2;
    default: return std::max(w, g + 1);
  }
}
std::size_t token_group(const storage_format& f) {
  return f.groups && f.axis == group_axis::token && f.group > 1 ? f.group : 0;
}
}  // namespace

cache_config fit_formats(cache_config c, const numeric_profile& p, std::uint64_t k_code, std::uint64_t v_code,
                         bool long_case) {
  // A latent row's widths come from its generator: its value row is its key row's first groups, whole.
  const bool fixed = long_case || c.kind == cache_kind::latent;
  const std::size_t gk = fixed ? 0 : token_group(p.keys), gv = fixed ? 0 : token_group(p.values);
  if (c.d_k == c.d_v && (gk || gv)) {
    c.d_k = c.d_v = group_width(c.d_k, std::max(gk, gv));  // a kind may need d_k = d_v (beam)
  } else {
    if (gk) c.d_k = group_width(c.d_k, gk);
    if (gv) c.d_v = group_width(c.d_v, gv);
  }
  const std::size_t chunk = std::max(p.keys.chunk(), p.values.chunk());
  if (!long_case) c.capacity *= (chunk + 3) / 4;
  // One scale per side, shared by a hybrid cache's groups (as vLLM's per-layer k_scale of an fp8 group).
  if (p.keys.scaled || p.keys_of(true).scaled) c.k_scale = scale_of_code(k_code);
  if (p.values.scaled || p.values_of(true).scaled) c.v_scale = scale_of_code(v_code);
  return c;
}

}  // namespace kvconform
