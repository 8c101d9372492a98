// The double-double exponential and its constants (compiled with -ffp-contract=off, see CMakeLists.txt).
#include "oracle/numeric/double_double.h"

#include <array>
#include <bit>
#include <cstdint>

namespace kvconform::dd {

namespace {
/// Terms of the Taylor series of e^r - 1 kept: r^10 / 10! < 2^-106 |r| once |r| <= ln 2 / 2^10.
constexpr int taylor_terms = 10;
/// The argument is divided by 2^squarings before the series and the result squared that often.
constexpr int squarings = 9;
constexpr double shrink = 1.0 / (1 << squarings);

/// 2^k for a k where it is a normal double.
double power_of_two(int k) { return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52); }
}  // namespace

const ddouble* inverse_factorials() {
  static const std::array<ddouble, taylor_terms + 1> table = [] {
    std::array<ddouble, taylor_terms + 1> t{};
    double factorial = 1;  // exact: k! <= 10! needs 22 bits
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
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
__attribute__((target_clones("fma", "default")))
#endif
#endif
ddouble exp(ddouble x) {
  if (std::isnan(x.hi)) return {x.hi, 0};
  if (x.hi <= -745.2) return {0, 0};  // e^x < denorm_min / 2: double rounds it to 0
  if (x.hi >= 709.8) return {std::numeric_limits<double>::infinity(), 0};
  if (x.hi == 0) return {1, 0};
  // x = k ln 2 + r with |r| <= ln 2 / 2; k ln 2 is formed in double-double, so r keeps ~106 bits.
  const double k = std::nearbyint(x.hi / ln2.hi);
  const ddouble r = scale(sub(x, mul(ln2, k)), shrink);
  // e^r - 1 = r + r^2 q, q = sum_{i >= 2} r^(i-2) / i!, by Horner. q needs about 2^-96 absolute
  // (|r| <= 2^-10); the terms from r^4/6! on are below 2^-51 of it, so they are summed in double.
  const ddouble* f = inverse_factorials();
  double tail = f[taylor_terms].hi;
  for (int i = taylor_terms - 1; i >= 6; --i) tail = tail * r.hi + f[i].hi;
  ddouble q = add(f[5], mul(r, tail));
  for (int i = 4; i >= 2; --i) q = add(f[i], mul(q, r));
  ddouble s = add(r, mul(mul(r, r), q));
  // (e^r - 1) -> (e^2r - 1) = (e^r - 1)(e^r + 1), keeping the small quantity, not 1 + it.
  for (int i = 0; i < squarings; ++i) s = mul(s, add(s, 2.0));
  s = add(s, 1.0);
  // 2^k as one double when it is normal (the result may still be subnormal: then ldexp rounds once).
  return k >= -1022 ? scale(s, power_of_two(static_cast<int>(k))) : ldexp(s, static_cast<int>(k));
}

}  // namespace kvconform::dd
