// The double-double oracle: generic lane kernels, their AVX2 + FMA twins behind a CPU check, and the formula.
#include "oracle/numeric/dd_oracle.h"

#include <cstddef>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KVCONFORM_DD_X86 1
#endif

namespace kvconform {

namespace {
using dd::ddouble;

/// Independent accumulators of a dot product: lane l sums the products j = l (mod 4), in order.
constexpr std::size_t lanes = 4;

/// acc[j mod 4] += k_j q_j for j in [from, d), each product exact and each sum error-free.
void dot_lanes(const double* k, const double* q, std::size_t from, std::size_t d, ddouble* acc) {
  for (std::size_t j = from; j < d; ++j) acc[j % lanes] = dd::add(acc[j % lanes], dd::two_prod(k[j], q[j]));
}

/// acc_c += w v_c for c in [from, d): each product to 106 bits, each sum in double-double.
void axpy_columns(ddouble w, const double* v, std::size_t from, std::size_t d, double* hi, double* lo) {
  for (std::size_t c = from; c < d; ++c) {
    const ddouble s = dd::add(ddouble{hi[c], lo[c]}, dd::mul(w, v[c]));
    hi[c] = s.hi, lo[c] = s.lo;
  }
}

ddouble combine(const ddouble* acc) { return dd::add(dd::add(acc[0], acc[1]), dd::add(acc[2], acc[3])); }

ddouble dot_generic(const double* k, const double* q, std::size_t d) {
  ddouble acc[lanes] = {};
  dot_lanes(k, q, 0, d, acc);
  return combine(acc);
}

#ifdef KVCONFORM_DD_X86
#define KVCONFORM_FMA_TARGET __attribute__((target("avx2,fma")))

/// The double-double sum (a_hi, a_lo) + (b_hi, b_lo) of dd::add, four lanes at once, same operations.
KVCONFORM_FMA_TARGET inline void add4(__m256d& a_hi, __m256d& a_lo, __m256d b_hi, __m256d b_lo) {
  const __m256d s = _mm256_add_pd(a_hi, b_hi), sb = _mm256_sub_pd(s, a_hi);
  const __m256d se = _mm256_add_pd(_mm256_sub_pd(a_hi, _mm256_sub_pd(s, sb)), _mm256_sub_pd(b_hi, sb));
  const __m256d t = _mm256_add_pd(a_lo, b_lo), tb = _mm256_sub_pd(t, a_lo);
  const __m256d te = _mm256_add_pd(_mm256_sub_pd(a_lo, _mm256_sub_pd(t, tb)), _mm256_sub_pd(b_lo, tb));
  const __m256d u = _mm256_add_pd(se, t), h = _mm256_add_pd(s, u), l = _mm256_sub_pd(u, _mm256_sub_pd(h, s));
  const __m256d u2 = _mm256_add_pd(l, te);
  a_hi = _mm256_add_pd(h, u2);
  a_lo = _mm256_sub_pd(u2, _mm256_sub_pd(a_hi, h));
}

KVCONFORM_FMA_TARGET ddouble dot_fma(const double* k, const double* q, std::size_t d) {
  __m256d hi = _mm256_setzero_pd(), lo = _mm256_setzero_pd();
  const std::size_t whole = d - d % lanes;
  for (std::size_t j = 0; j < whole; j += lanes) {
    const __m256d x = _mm256_loadu_pd(k + j), y = _mm256_loadu_pd(q + j);
    const __m256d p = _mm256_mul_pd(x, y);
    add4(hi, lo, p, _mm256_fmsub_pd(x, y, p));  // TwoProduct: the exact rounding error of x y
  }
  alignas(32) double h[lanes], l[lanes];
  _mm256_store_pd(h, hi), _mm256_store_pd(l, lo);
  ddouble acc[lanes] = {{h[0], l[0]}, {h[1], l[1]}, {h[2], l[2]}, {h[3], l[3]}};
  dot_lanes(k, q, whole, d, acc);
  return combine(acc);
}

KVCONFORM_FMA_TARGET void axpy_fma(ddouble w, const double* v, std::size_t d, double* hi, double* lo) {
  const __m256d w_hi = _mm256_set1_pd(w.hi), w_lo = _mm256_set1_pd(w.lo);
  const std::size_t whole = d - d % lanes;
  for (std::size_t c = 0; c < whole; c += lanes) {
    const __m256d x = _mm256_loadu_pd(v + c), p = _mm256_mul_pd(w_hi, x);
    // dd::mul(w, x): the exact product of the high parts, plus w_lo x, renormalised.
    const __m256d e = _mm256_add_pd(_mm256_fmsub_pd(w_hi, x, p), _mm256_mul_pd(w_lo, x));
    const __m256d s = _mm256_add_pd(p, e), t = _mm256_sub_pd(e, _mm256_sub_pd(s, p));
    __m256d a_hi = _mm256_loadu_pd(hi + c), a_lo = _mm256_loadu_pd(lo + c);
    add4(a_hi, a_lo, s, t);
    _mm256_storeu_pd(hi + c, a_hi), _mm256_storeu_pd(lo + c, a_lo);
  }
  axpy_columns(w, v, whole, d, hi, lo);
}
#endif

void axpy_generic(ddouble w, const double* v, std::size_t d, double* hi, double* lo) {
  axpy_columns(w, v, 0, d, hi, lo);
}

/// The two O(n d) loops, through the kernels chosen once per call.
struct kernels {
  ddouble (*dot)(const double*, const double*, std::size_t);
  void (*axpy)(ddouble, const double*, std::size_t, double*, double*);
};

kernels pick(dd_kernels choice) {
#ifdef KVCONFORM_DD_X86
  if (choice != dd_kernels::generic && dd_fma_kernels_available()) return {dot_fma, axpy_fma};
#endif
  (void)choice;
  return {dot_generic, axpy_generic};
}
}  // namespace

bool dd_fma_kernels_available() {
#ifdef KVCONFORM_DD_X86
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

ddouble dot_dd(const double* a, const double* b, std::size_t d, dd_kernels choice) {
  static const kernels automatic = pick(dd_kernels::automatic);
  return (choice == dd_kernels::automatic ? automatic : pick(choice)).dot(a, b, d);
}

dd_oracle_result attention_oracle_dd(const attention_problem& p, dd_kernels choice) {
  const kernels k = pick(choice);
  dd_oracle_result r;
  r.s.assign(p.n, {});
  r.w.assign(p.n, {});
  r.o.assign(p.d_v, {});
  const ddouble scale = dd::div({1, 0}, dd::sqrt(static_cast<double>(p.d_k)));
  for (std::size_t i = 0; i < p.n; ++i) {
    if (!p.is_live(i)) continue;
    r.s[i] = dd::mul(k.dot(p.keys.data() + i * p.d_k, p.q.data(), p.d_k), scale);
    if (p.softcap > 0) r.s[i] = dd::mul(dd::tanh(dd::div(r.s[i], {p.softcap, 0})), p.softcap);
    if (!r.any_live || dd::less(r.m, r.s[i])) r.m = r.s[i];
    r.any_live = true;
  }
  if (!r.any_live) return r;
  if (p.has_sink && dd::less(r.m, {p.sink, 0})) r.m = {p.sink, 0};
  // The normaliser: at least 1, since the max's own term is e^0; a learned sink adds its term and no value.
  ddouble l = p.has_sink ? dd::exp(dd::sub({p.sink, 0}, r.m)) : ddouble{};
  for (std::size_t i = 0; i < p.n; ++i)
    if (p.is_live(i)) l = dd::add(l, r.w[i] = dd::exp(dd::sub(r.s[i], r.m)));
  const ddouble inverse = dd::div({1, 0}, l);  // one division; each weight is then a product
  std::vector<double> hi(p.d_v, 0.0), lo(p.d_v, 0.0);
  for (std::size_t i = 0; i < p.n; ++i) {
    if (!p.is_live(i)) continue;
    r.w[i] = dd::mul(r.w[i], inverse);
    k.axpy(r.w[i], p.values.data() + i * p.d_v, p.d_v, hi.data(), lo.data());
  }
  for (std::size_t c = 0; c < p.d_v; ++c) r.o[c] = {hi[c], lo[c]};
  return r;
}

}  // namespace kvconform
