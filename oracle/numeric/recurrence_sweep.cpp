// The recurrence's O(d_k d_v) sweep: generic rows and their AVX2 + FMA twins, the same operations in the same order
// (compiled with -ffp-contract=off, see oracle/numeric/CMakeLists.txt).
#include "oracle/numeric/recurrence_sweep.h"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KVCONFORM_SWEEP_X86 1
#endif

namespace kvconform::recurrence_terms {

namespace {
using dd::ddouble;
static_assert(sizeof(ddouble) == 2 * sizeof(double), "the AVX2 rows read a ddouble array as hi, lo pairs");

/// a + b to about 2u^2 of |a| + |b| (one TwoSum): enough wherever the bound is relative to the terms' magnitudes,
/// as every sum of the recurrence is (docs/numerics.md §3.9).
[[gnu::always_inline]] inline ddouble accumulate(ddouble a, ddouble b) {
  const ddouble s = dd::two_sum(a.hi, b.hi);
  return dd::fast_two_sum(s.hi, s.lo + (a.lo + b.lo));
}

// The scalar rows, from column `from` on: all of a row in the generic kernels, the tail past the last four in the
// AVX2 ones (inlined there, so their TwoProducts use the hardware FMA: the same bits).
[[gnu::always_inline]] inline void project_columns(const sweep& a, std::size_t j, std::size_t from) {
  for (std::size_t c = from; c < a.d_v; ++c) a.proj[c] = accumulate(a.proj[c], dd::mul(a.k[j], a.S[j * a.d_v + c]));
}
/// w is b k_j for the delta rule, k_j for the decay form. The new entry's read-out and norm terms are taken while it
/// is at hand: per column the same terms in the same order (j ascending) as a separate pass over the new state.
template <bool delta>
[[gnu::always_inline]] inline void update_columns(const sweep& a, ddouble w, std::size_t j, std::size_t from) {
  for (std::size_t c = from; c < a.d_v; ++c) {
    ddouble e = a.S[j * a.d_v + c];
    if constexpr (delta) e = accumulate(e, dd::neg(dd::mul(w, a.proj[c])));
    e = accumulate(dd::mul(a.alpha, e), dd::mul(w, a.v[c]));
    a.S[j * a.d_v + c] = e;
    a.o[c] = accumulate(a.o[c], dd::mul(a.q[j], e));
    if constexpr (delta) a.norms[c] += e.hi * e.hi;
  }
}

struct generic_rows {
  static void project(const sweep& a, std::size_t j) { project_columns(a, j, 0); }
  template <bool delta>
  static void update(const sweep& a, ddouble w, std::size_t j) {
    update_columns<delta>(a, w, j, 0);
  }
};

#ifdef KVCONFORM_SWEEP_X86
#define KVCONFORM_FMA_TARGET __attribute__((target("avx2,fma")))

/// Four double-doubles of consecutive columns, high and low parts apart. Unpacking leaves the lanes in the order
/// c, c + 2, c + 1, c + 3; every operand is loaded alike and stored back the same way, so only the norms, kept in
/// column order, see it.
struct dd4 {
  __m256d hi, lo;
};
KVCONFORM_FMA_TARGET inline dd4 load4(const ddouble* p) {
  const __m256d a = _mm256_loadu_pd(&p->hi), b = _mm256_loadu_pd(&p[2].hi);
  return {_mm256_unpacklo_pd(a, b), _mm256_unpackhi_pd(a, b)};
}
KVCONFORM_FMA_TARGET inline void store4(ddouble* p, dd4 x) {
  _mm256_storeu_pd(&p->hi, _mm256_unpacklo_pd(x.hi, x.lo)), _mm256_storeu_pd(&p[2].hi, _mm256_unpackhi_pd(x.hi, x.lo));
}
KVCONFORM_FMA_TARGET inline dd4 broadcast4(ddouble a) { return {_mm256_set1_pd(a.hi), _mm256_set1_pd(a.lo)}; }
KVCONFORM_FMA_TARGET inline dd4 fast_two_sum4(__m256d a, __m256d b) {
  const __m256d s = _mm256_add_pd(a, b);
  return {s, _mm256_sub_pd(b, _mm256_sub_pd(s, a))};
}
/// dd::mul, four lanes at once.
KVCONFORM_FMA_TARGET inline dd4 mul4(dd4 a, dd4 b) {
  const __m256d p = _mm256_mul_pd(a.hi, b.hi), e = _mm256_fmsub_pd(a.hi, b.hi, p);
  return fast_two_sum4(p, _mm256_add_pd(e, _mm256_add_pd(_mm256_mul_pd(a.hi, b.lo), _mm256_mul_pd(a.lo, b.hi))));
}
/// accumulate, four lanes at once.
KVCONFORM_FMA_TARGET inline dd4 accumulate4(dd4 a, dd4 b) {
  const __m256d s = _mm256_add_pd(a.hi, b.hi), bb = _mm256_sub_pd(s, a.hi);
  const __m256d e = _mm256_add_pd(_mm256_sub_pd(a.hi, _mm256_sub_pd(s, bb)), _mm256_sub_pd(b.hi, bb));
  return fast_two_sum4(s, _mm256_add_pd(e, _mm256_add_pd(a.lo, b.lo)));
}
/// dd::neg: flipping the sign bits, exactly as negation does (zeros included).
KVCONFORM_FMA_TARGET inline dd4 neg4(dd4 a) {
  const __m256d sign = _mm256_set1_pd(-0.0);
  return {_mm256_xor_pd(a.hi, sign), _mm256_xor_pd(a.lo, sign)};
}

struct fma_rows {
  KVCONFORM_FMA_TARGET static void project(const sweep& a, std::size_t j) {
    const dd4 k = broadcast4(a.k[j]);
    const ddouble* row = a.S + j * a.d_v;
    const std::size_t whole = a.d_v - a.d_v % 4;
    for (std::size_t c = 0; c < whole; c += 4)
      store4(a.proj + c, accumulate4(load4(a.proj + c), mul4(k, load4(row + c))));
    project_columns(a, j, whole);
  }
  template <bool delta>
  KVCONFORM_FMA_TARGET static void update(const sweep& a, ddouble w, std::size_t j) {
    const dd4 alpha = broadcast4(a.alpha), w4 = broadcast4(w), q = broadcast4(a.q[j]);
    ddouble* row = a.S + j * a.d_v;
    const std::size_t whole = a.d_v - a.d_v % 4;
    for (std::size_t c = 0; c < whole; c += 4) {
      dd4 e = load4(row + c);
      if constexpr (delta) e = accumulate4(e, neg4(mul4(w4, load4(a.proj + c))));
      e = accumulate4(mul4(alpha, e), mul4(w4, load4(a.v + c)));
      store4(row + c, e);
      store4(a.o + c, accumulate4(load4(a.o + c), mul4(q, e)));
      if constexpr (delta) {  // lanes c, c + 2, c + 1, c + 3 back to column order
        const __m256d h = _mm256_permute4x64_pd(e.hi, 0b11011000);
        _mm256_storeu_pd(a.norms + c, _mm256_add_pd(_mm256_loadu_pd(a.norms + c), _mm256_mul_pd(h, h)));
      }
    }
    update_columns<delta>(a, w, j, whole);
  }
};
#endif

/// The projection needs all of the old state, so it is a pass of its own; the update, read-out and norms share one.
template <class Rows>
void sweep_with(const sweep& a) {
  const std::size_t dv = a.d_v;
  std::fill(a.o, a.o + dv, ddouble{});
  if (a.beta < 0) {
    for (std::size_t j = 0; j < a.d_k; ++j) Rows::template update<false>(a, a.k[j], j);
    return;
  }
  std::fill(a.proj, a.proj + dv, ddouble{});
  for (std::size_t j = 0; j < a.d_k; ++j) Rows::project(a, j);
  std::fill(a.norms, a.norms + dv, 0.0);
  for (std::size_t j = 0; j < a.d_k; ++j) Rows::template update<true>(a, dd::mul(a.k[j], a.beta), j);
  for (std::size_t c = 0; c < dv; ++c) a.norms[c] = std::sqrt(a.norms[c]);
}
}  // namespace

void run_sweep(const sweep& a, dd_kernels k) {
#ifdef KVCONFORM_SWEEP_X86
  if (k == dd_kernels::fma || (k == dd_kernels::automatic && dd_fma_kernels_available()))
    return sweep_with<fma_rows>(a);
#endif
  (void)k;
  sweep_with<generic_rows>(a);
}

}  // namespace kvconform::recurrence_terms
