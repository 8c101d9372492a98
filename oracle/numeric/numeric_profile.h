// What an implementation declares about its arithmetic: the parameters of the error bound.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "oracle/numeric/attention_semantics.h"
#include "oracle/numeric/storage_format.h"

namespace kvconform {

/// Floating formats that an implementation may store in or compute with.
enum class precision { f64, f32, bf16 };

/// Unit roundoff: 2^-53, 2^-24, 2^-8.
double unit_roundoff(precision p);
/// Smallest positive normal number of the format.
double smallest_normal(precision p);
/// x rounded to nearest-even in the format (exact for values already in it).
double round_to(precision p, double x);
const char* to_string(precision p);

/// The numeric profile (docs/numerics.md §2). Defaults describe a double, two-pass cache.
/// The order a latent (MLA) cache's decode multiplies in (docs/kinds/latent.md): each head's keys and values
/// built from the rows first, or the up-projections folded into the query and the output; none for other kinds.
enum class latent_path : unsigned char { none, materialised, absorbed };
const char* to_string(latent_path p);

struct numeric_profile {
  precision storage = precision::f64;  ///< what k, v and q are rounded to on arrival
  /// How keys and values are stored after that (docs/numerics.md §6): element formats are rounded
  /// exactly as declared; integer groups are judged by their rules.
  storage_format keys = formats::f64, values = formats::f64;
  precision working = precision::f64;  ///< accumulation precision (gives u)
  /// Online softmax: 0 = two-pass (n_r = 0); B > 0 = declared block of B keys
  /// (n_r = ceil(n/B) - 1); `online_undeclared` = rescale after every key (n_r = n - 1).
  std::size_t online_block = 0;
  bool online_undeclared = false;
  std::size_t splits = 0;        ///< split-K: partials combined with exp(m_s - M) add splits - 1 rescales
  double u_p = 0;                ///< unit roundoff of P before the PV product (2^-8 for bf16 P)
  double u_out = 0;              ///< unit roundoff of the stored output
  bool flush_subnormals = true;  ///< FTZ allowed: mu = smallest normal, else denorm_min
  /// A hybrid cache's sliding layer group stored in another element format than `keys` and `values`, as vLLM
  /// lets groups differ (docs/kinds/hybrid.md); unset: as the other groups.
  std::optional<storage_format> sliding_keys, sliding_values;
  latent_path latent = latent_path::none;  ///< a latent cache's declared decode order
  /// What the decode computes besides softmax(q K^T / sqrt(d_k)) V (docs/numerics.md §7): learned sinks, a window,
  /// a soft cap. Part of the contract, not of the bound's parameters: it changes what is expected.
  attention_semantics attention;

  /// The formats of the sliding group's keys and values, or of every other stream's.
  storage_format keys_of(bool sliding) const { return sliding && sliding_keys ? *sliding_keys : keys; }
  storage_format values_of(bool sliding) const { return sliding && sliding_values ? *sliding_values : values; }

  /// In words, for `list`: "storage f64, working f64, FTZ allowed", with keys and values when not f64.
  std::string describe() const;
  /// A stable JSON object a port can send (docs/numerics.md §2.1); profile_from_json reads it back.
  std::string to_json() const;
  /// Whether any side is stored in a format that changes values (so the end-to-end figure means something).
  bool rounds_storage() const {
    return keys.rounds() || values.rounds() || keys_of(true).rounds() || values_of(true).rounds();
  }
};

/// Reads the JSON of numeric_profile::to_json (missing fields keep their defaults); throws
/// std::invalid_argument naming the field on anything else.
numeric_profile profile_from_json(std::string_view text);
/// What is wrong with a profile ("" when valid): its storage formats' own checks.
std::string check(const numeric_profile& p);
/// Which declared attention (docs/numerics.md §7) a kind serves: none, all of it (flat), or sinks and soft caps over
/// the window its config sets (ring, hybrid).
enum class attention_served : unsigned char { plain, all, over_config_window };
/// What a cache of a kind with (hybrid) sliding layers or (latent) rows whose values are their keys' may not
/// declare, or must ("" when the profile fits the kind).
std::string kind_problem(const numeric_profile& p, bool hybrid, bool latent, attention_served served);
/// The declared attention the kind named `kind` serves.
attention_served attention_served_by(const std::string& kind);
/// Decimals to which pinned outputs and weights are compared: what the working precision and the
/// stored formats resolve; -1 when integer groups leave the numbers to the oracle alone.
int pinned_decimals(const numeric_profile& p);

}  // namespace kvconform
