// What an implementation declares about its arithmetic: the parameters of the error bound.
#pragma once

#include <cstddef>
#include <string>

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
struct numeric_profile {
  precision storage = precision::f64;  ///< what stored rows and q are rounded to before use
  precision working = precision::f64;  ///< accumulation precision (gives u)
  /// Online softmax: 0 = two-pass (n_r = 0); B > 0 = declared block of B keys
  /// (n_r = ceil(n/B) - 1); `online_undeclared` = rescale after every key (n_r = n - 1).
  std::size_t online_block = 0;
  bool online_undeclared = false;
  std::size_t splits = 0;        ///< split-K: partials combined with exp(m_s - M) add splits - 1 rescales
  double u_p = 0;                ///< unit roundoff of P before the PV product (2^-8 for bf16 P)
  double u_out = 0;              ///< unit roundoff of the stored output
  bool flush_subnormals = true;  ///< FTZ allowed: mu = smallest normal, else denorm_min

  std::string describe() const;
};

}  // namespace kvconform
