// Format facts and rounding used by the bound and by models that store in a narrower format.
#include "oracle/numeric/numeric_profile.h"

#include "oracle/numeric/element_rounding.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

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
  switch (p) {
    case precision::f64: return x;
    case precision::f32: return static_cast<float>(x);
    case precision::bf16: return round_element(formats::bf16, x);  // exact: no detour through float
  }
  return x;
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
  std::string s = std::string("storage ") + to_string(storage);
  if (keys.rounds()) s += ", keys " + kvconform::describe(keys);
  if (values.rounds()) s += ", values " + kvconform::describe(values);
  if (sliding_keys) s += ", sliding keys " + kvconform::describe(*sliding_keys);
  if (sliding_values) s += ", sliding values " + kvconform::describe(*sliding_values);
  if (latent != latent_path::none) s += std::string(", ") + to_string(latent) + " decode";
  s += std::string(", working ") + to_string(working);
  if (online_block) s += ", online block " + std::to_string(online_block);
  if (online_undeclared) s += ", online (undeclared block)";
  if (splits) s += ", split-K " + std::to_string(splits);
  if (u_p) s += ", P rounded";
  if (u_out) s += ", output rounded";
  s += flush_subnormals ? ", FTZ allowed" : ", no FTZ";
  if (!attention.plain()) s += "; attention: " + attention.describe();
  return s;
}

std::string check(const numeric_profile& p) {
  for (auto [side, f] : {std::pair{"keys", &p.keys}, {"values", &p.values}})
    if (const std::string why = check(*f); !why.empty()) return std::string(side) + " " + why;
  for (auto [side, f] : {std::pair{"sliding_keys", &p.sliding_keys}, {"sliding_values", &p.sliding_values}}) {
    if (!*f) continue;
    // A hybrid block holds final rows of several layers: element formats only (docs/kinds/hybrid.md).
    if ((*f)->groups) return std::string(side) + " must be an element format, not integer groups";
    if (const std::string why = check(**f); !why.empty()) return std::string(side) + " " + why;
  }
  if (const std::string why = check(p.attention); !why.empty()) return "attention." + why;
  return "";
}

const char* to_string(latent_path p) {
  switch (p) {
    case latent_path::none: return "none";
    case latent_path::materialised: return "materialised";
    case latent_path::absorbed: return "absorbed";
  }
  return "?";
}

attention_served attention_served_by(const std::string& kind) {
  if (kind == "flat") return attention_served::all;
  if (kind == "ring" || kind == "paged" || kind == "hybrid") return attention_served::over_config_window;
  return attention_served::plain;
}

std::string kind_problem(const numeric_profile& p, bool hybrid, bool latent, attention_served served) {
  if (served == attention_served::plain && !p.attention.plain())
    return "attention: this kind serves plain attention only (declared attention: flat; sinks and softcap: ring, "
           "paged, hybrid)";
  if (served == attention_served::over_config_window && p.attention.window != window_kind::none)
    return "attention.window: this kind's window (if any) is its config's; declare sinks and softcap only";
  if (served == attention_served::over_config_window && p.attention.top_k > 0)
    return "attention.sparse: top-k is served by flat only; declare sinks and softcap only";
  if ((p.sliding_keys || p.sliding_values) && !hybrid)
    return "sliding_keys and sliding_values are the hybrid kind's (its sliding layers)";
  if (!latent) return p.latent == latent_path::none ? "" : "latent_path is the latent kind's";
  if (p.latent == latent_path::none) return "a latent cache declares its latent_path, materialised or absorbed";
  // Values are the first d_c entries of the stored rows (docs/kinds/latent.md): one format, and integer groups only
  // along each row, quantized as it arrives, so that a value row's groups are its key row's first ones.
  if (!(p.values == p.keys)) return "a latent cache's values are its key rows' own: declare values as keys";
  if (p.keys.groups && (p.keys.axis != group_axis::token || p.keys.residual != 0))
    return "a latent cache's integer groups run along each row (token axis), quantized on arrival (no residual)";
  return "";
}

int pinned_decimals(const numeric_profile& p) {
  if (p.keys.groups || p.values.groups) return -1;
  auto of = [](element_format e) {
    static const int decimals[] = {15, 5, 2, 1, 0, 0};  // f64 f32 fp16 bf16 e4m3 e5m2
    return decimals[static_cast<int>(e)];
  };
  const int working = p.working == precision::f64 ? 15 : p.working == precision::f32 ? 5 : 1;
  return std::min(
      {working, of(p.keys.element), of(p.values.element), of(p.keys_of(true).element), of(p.values_of(true).element)});
}

}  // namespace kvconform
