// The double-double exponential and its constants (compiled with -ffp-contract=off, see CMakeLists.txt).
#include "oracle/numeric/double_double.h"

#include <array>
#include <bit>
#include <cstdint>

namespace kvconform::dd {

namespace {
/// Terms of the Taylor series of e^r - 1 kept: r^11/11!, the last, is below 2^-106 |r| once
/// |r| <= ln 2 / 2^9.
constexpr int taylor_terms = 11;
/// e^x = 2^k 2^(j/table_size) e^r: table_size entries of 2^(j/table_size) in double-double.
constexpr int table_bits = 8, table_size = 1 << table_bits;

/// 2^k for a k where it is a normal double.
double power_of_two(int k) { return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52); }

/// e^r - 1 = r + r^2 q, q = sum_{i >= 2} r^(i-2) / i!, by Horner, for |r| <= ln 2 / 2^9. q needs
/// about 2^-96 absolute; the terms from r^4/6! on are below 2^-49 of q, so they are summed in double.
ddouble expm1_series(ddouble r) {
  const ddouble* f = inverse_factorials();
  double tail = f[taylor_terms].hi;
  for (int i = taylor_terms - 1; i >= 6; --i) tail = tail * r.hi + f[i].hi;
  ddouble q = add(f[5], mul(r, tail));
  for (int i = 4; i >= 2; --i) q = add(f[i], mul(q, r));
  return add(r, mul(mul(r, r), q));
}

/// e^x for 0 <= x < ln 2 by halving: the series at x / 2^9, squared back nine times as
/// (e^r - 1)(e^r + 1), keeping the small quantity, not 1 + it. Only builds the table.
ddouble exp_by_halving(ddouble x) {
  constexpr int halvings = 9;
  ddouble s = expm1_series(scale(x, 1.0 / (1 << halvings)));
  for (int i = 0; i < halvings; ++i) s = mul(s, add(s, 2.0));
  return add(s, 1.0);
}

const ddouble* powers_of_two_fraction() {
  static const std::array<ddouble, table_size> table = [] {
    std::array<ddouble, table_size> t{};
    for (int j = 0; j < table_size; ++j)
      t[static_cast<std::size_t>(j)] = exp_by_halving(mul(ln2, double(j) / table_size));
    return t;
  }();
  return table.data();
}
}  // namespace

const ddouble* inverse_factorials() {
  static const std::array<ddouble, taylor_terms + 1> table = [] {
    std::array<ddouble, taylor_terms + 1> t{};
    double factorial = 1;  // exact: k! <= 11! needs 26 bits
    for (int k = 0; k <= taylor_terms; ++k) {
      if (k > 0) factorial *= k;
      t[static_cast<std::size_t>(k)] = div({1, 0}, {factorial, 0});
    }
    return t;
  }();
  return table.data();
}

// Cloned for CPUs with FMA (chosen once, at load time): there std::fma is one instruction instead
// of a call. Both clones compute the same bits, since the fused multiply-add is exact either way.
// Not under ThreadSanitizer: its instrumented resolver runs while the program is relocated, before
// the sanitizer's runtime is set up, and crashes every program of the tsan preset at start.
#if defined(__x86_64__) && defined(__has_attribute) && !defined(__SANITIZE_THREAD__)
#if __has_attribute(target_clones)
__attribute__((target_clones("fma", "default")))
#endif
#endif
ddouble
exp(ddouble x) {
  if (std::isnan(x.hi)) return {x.hi, 0};
  if (x.hi <= -745.2) return {0, 0};  // e^x < denorm_min / 2: double rounds it to 0
  if (x.hi >= 709.8) return {std::numeric_limits<double>::infinity(), 0};
  if (x.hi == 0) return {1, 0};
  // x = n ln 2 / 256 + r with |r| <= ln 2 / 512; n ln 2 / 256 is formed in double-double (n has at
  // most 19 bits), so r keeps ~106 bits of x. Then e^x = 2^k 2^(j/256) e^r with n = 256 k + j.
  const double n = std::nearbyint(x.hi * (table_size / ln2.hi));
  const ddouble r = sub(x, mul(scale(ln2, 1.0 / table_size), n));
  const auto whole = static_cast<int>(n), j = whole & (table_size - 1), k = (whole - j) / table_size;
  const ddouble t = powers_of_two_fraction()[j];
  const ddouble s = add(t, mul(t, expm1_series(r)));
  // 2^k as one double when it is normal (the result may still be subnormal: then ldexp rounds once).
  return k >= -1022 ? scale(s, power_of_two(k)) : ldexp(s, k);
}

ddouble tanh(ddouble x) {
  // Below 2^-60, tanh x = x (1 - x^2 / 3 + ...) is x to 2^-121, and the halving would work in subnormals.
  if (std::isnan(x.hi) || std::fabs(x.hi) < 0x1p-60) return x;
  const bool negative = x.hi < 0;
  const ddouble minus_two_a = scale(negative ? x : neg(x), 2.0);  // -2|x|
  // e = e^(-2|x|) - 1 in (-1, 0]; below |x| = 1/4 by halving (exp_by_halving's loop keeps the small quantity).
  ddouble e;
  if (-minus_two_a.hi < 0.5) {
    e = expm1_series(scale(minus_two_a, 1.0 / 512));
    for (int i = 0; i < 9; ++i) e = mul(e, add(e, 2.0));
  } else {
    e = add(exp(minus_two_a), -1.0);
  }
  const ddouble t = div(neg(e), add(e, 2.0));
  return negative ? neg(t) : t;
}

}  // namespace kvconform::dd
