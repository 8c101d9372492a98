// Learned sinks and soft caps (docs/numerics.md §7): the oracles against an MPFR referee, and the bound against
// correct and wrong decodes, every error taken from the referee.
#include <gtest/gtest.h>

#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <iostream>
#include <random>

#include "oracle/numeric/attention_oracle.h"
#include "oracle/numeric/bound.h"
#include "oracle/numeric/dd_oracle.h"

namespace kv = kvconform;
namespace mp = boost::multiprecision;
using referee = mp::number<mp::mpfr_float_backend<50>, mp::et_off>;

namespace {
referee value(kv::dd::ddouble a) { return referee(a.hi) + referee(a.lo); }

/// The variants every test runs: a sink below, near and above the scores, a cap that bends them, and both.
struct variant {
  const char* name;
  bool sink;
  double sink_offset;  ///< the sink's logit relative to the largest score
  double softcap;
};
constexpr variant variants[] = {{"sink below", true, -3, 0},  {"sink near", true, 0.5, 0},
                                {"sink above", true, 6, 0},   {"softcap 30", false, 0, 30},
                                {"softcap 5", false, 0, 5},   {"sink + softcap", true, 0, 20}};

/// n rows with scores of about `scale`, one variant's sink and cap.
kv::attention_problem draw(const variant& v, double scale, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  kv::attention_problem p;
  p.n = 1 + rng() % 96, p.d_k = 1 + rng() % 64, p.d_v = 1 + rng() % 6;
  for (std::size_t i = 0; i < p.n * p.d_k; ++i) p.keys.push_back(g(rng));
  for (std::size_t i = 0; i < p.n * p.d_v; ++i) p.values.push_back(g(rng));
  for (std::size_t j = 0; j < p.d_k; ++j) p.q.push_back(scale * g(rng));
  if (seed % 3 == 0)
    for (std::size_t i = 0; i < p.n; ++i) p.live.push_back(i % 4 != 1 || p.n == 1);
  p.softcap = v.softcap;
  if (v.sink) {
    const auto o = kv::attention_oracle<double>(p);
    p.has_sink = true, p.sink = o.m + v.sink_offset;
  }
  return p;
}

/// A decode of the declared attention in `Acc`; `key0_bias` adds the sink to key 0's score instead (vLLM PR
/// #49815's other semantics), `cap_after` caps the weights instead of the scores.
template <class Acc>
std::vector<double> decode(const kv::attention_problem& p, bool key0_bias = false, bool cap_after = false) {
  std::vector<Acc> s(p.n);
  Acc m = -INFINITY, l = 0;
  for (std::size_t i = 0; i < p.n; ++i) {
    if (!p.is_live(i)) continue;
    Acc dot = 0;
    for (std::size_t j = 0; j < p.d_k; ++j) dot += Acc(p.keys[i * p.d_k + j]) * Acc(p.q[j]);
    s[i] = dot / std::sqrt(Acc(p.d_k));
    if (p.softcap > 0 && !cap_after) s[i] = Acc(p.softcap) * std::tanh(s[i] / Acc(p.softcap));
    if (key0_bias && p.has_sink && i == 0) s[i] += Acc(p.sink);
    m = std::max(m, s[i]);
  }
  const bool sink = p.has_sink && !key0_bias;
  if (sink) m = std::max(m, Acc(p.sink));
  for (std::size_t i = 0; i < p.n; ++i)
    if (p.is_live(i)) l += (s[i] = std::exp(s[i] - m));
  if (sink) l += std::exp(Acc(p.sink) - m);
  std::vector<double> o(p.d_v, 0.0);
  for (std::size_t i = 0; i < p.n; ++i) {
    if (!p.is_live(i)) continue;
    Acc w = s[i] / l;
    if (cap_after && p.softcap > 0) w = Acc(p.softcap) * std::tanh(w / Acc(p.softcap));
    for (std::size_t c = 0; c < p.d_v; ++c) o[c] += double(w * Acc(p.values[i * p.d_v + c]));
  }
  return o;
}

/// The largest |o^_c - o_c| / B_c, o from the referee and B from the bound of `prof`.
double worst_ratio(const kv::attention_problem& p, const std::vector<double>& out, const kv::numeric_profile& prof) {
  const auto o = kv::attention_oracle<referee>(p);
  std::vector<double> s, w, od;
  for (std::size_t i = 0; i < p.n; ++i) s.push_back(double(o.s[i])), w.push_back(double(o.w[i]));
  for (std::size_t c = 0; c < p.d_v; ++c) od.push_back(double(o.o[c]));
  const auto b = kv::compute_bound(p, s, double(o.m), w, od, prof);
  double r = 0;
  for (std::size_t c = 0; c < p.d_v; ++c) r = std::max(r, double(abs(referee(out[c]) - o.o[c])) / b.output[c]);
  return r;
}

kv::numeric_profile f32() {
  kv::numeric_profile p;
  p.storage = p.working = kv::precision::f32;
  return p;
}

/// The problem rounded to float, as a float cache stores it.
kv::attention_problem as_float(kv::attention_problem p) {
  std::vector<double> k(p.keys.begin(), p.keys.end()), v(p.values.begin(), p.values.end());
  for (double& x : k) x = float(x);
  for (double& x : v) x = float(x);
  for (double& x : p.q) x = float(x);
  p.keys = std::move(k), p.values = std::move(v), p.sink = float(p.sink);
  return p;
}
}  // namespace

TEST(VariantOracle, DoubleDoubleTanhAgreesWithMpfr) {
  double worst = 0;
  for (double x : {1e-300, 1e-20, 1e-8, 0.001, 0.1, 0.2499, 0.25, 0.2501, 0.7, 1.0, 3.3, 9.0, 19.5, 40.0, 400.0}) {
    for (double sign : {1.0, -1.0}) {
      const kv::dd::ddouble t = kv::dd::tanh({sign * x, sign * x * 0x1p-60});
      const referee want = tanh(referee(sign * x) + referee(sign * x * 0x1p-60));
      const double err = double(abs(value(t) - want) / abs(want));
      EXPECT_LE(err, 1e-31) << "x " << sign * x;
      worst = std::max(worst, err);
    }
  }
  std::cout << "[ measured ] dd tanh worst relative error: " << worst << "\n";
}

// The same agreement as docs/numerics.md §1.3 states for the plain formula: scores within 1e-26 a_i (plus the cap's
// scale c), weights within 1e-26 w_i, outputs within 1e-26 sum_i w_i |v_ic|.
TEST(VariantOracle, DoubleDoubleAgreesWithMpfrOnSinksAndCaps) {
  double worst = 0;
  for (const variant& v : variants)
    for (double scale : {0.3, 3.0, 30.0, 300.0})
      for (unsigned seed = 0; seed < 12; ++seed) {
        const auto p = draw(v, scale, seed);
        const auto got = kv::attention_oracle_dd(p);
        const auto want = kv::attention_oracle<referee>(p);
        auto track = [&](const referee& err, const referee& size) {
          const double r = double(err / (1e-26 * size + 1e-320));
          EXPECT_LE(r, 1) << v.name << " scale " << scale << " seed " << seed;
          worst = std::max(worst, r);
        };
        for (std::size_t i = 0; i < p.n; ++i) {
          if (!p.is_live(i)) continue;
          referee a = 0;
          for (std::size_t j = 0; j < p.d_k; ++j) a += abs(referee(p.keys[i * p.d_k + j]) * referee(p.q[j]));
          track(abs(value(got.s[i]) - want.s[i]), a / sqrt(referee(p.d_k)) + p.softcap);
          track(abs(value(got.w[i]) - want.w[i]), want.w[i]);
        }
        for (std::size_t c = 0; c < p.d_v; ++c) {
          referee size = 0;
          for (std::size_t i = 0; i < p.n; ++i) size += want.w[i] * abs(referee(p.values[i * p.d_v + c]));
          track(abs(value(got.o[c]) - want.o[c]), size);
        }
      }
  std::cout << "[ measured ] dd oracle with sinks and caps, worst error / (1e-26 x scale): " << worst << "\n";
}

// Correct double and float decodes of each variant stay within the bound; the twins fail it by orders of magnitude.
TEST(VariantBound, CorrectDecodesPassAndEveryWrongSemanticsFails) {
  double worst64 = 0, worst32 = 0;
  for (const variant& v : variants)
    for (double scale : {0.3, 3.0, 30.0, 300.0})
      for (unsigned seed = 0; seed < 12; ++seed) {
        const std::string at = std::string(v.name) + " scale " + std::to_string(scale) + " seed " + std::to_string(seed);
        const auto p = draw(v, scale, seed);
        const double r64 = worst_ratio(p, decode<double>(p), {});
        EXPECT_LT(r64, 1) << at;
        worst64 = std::max(worst64, r64);
        const auto pf = as_float(p);
        const double r32 = worst_ratio(pf, decode<float>(pf), f32());
        EXPECT_LT(r32, 1) << at;
        worst32 = std::max(worst32, r32);
        EXPECT_GT(worst_ratio(p, decode<float>(p), {}), 10) << "float accumulation in a double cache, " << at;
        // A wrong semantics shows only where the sink has weight or the cap bends a score the softmax weighs.
        if (p.has_sink && v.sink_offset > -1 && p.n > 1) {
          EXPECT_GT(worst_ratio(p, decode<double>(p, true), {}), 1e3) << "key-0 bias, " << at;
        }
        if (p.softcap > 0 && scale >= 30 && p.d_k > 4) {
          EXPECT_GT(worst_ratio(p, decode<double>(p, false, true), {}), 1e3) << "cap after softmax, " << at;
        }
      }
  std::cout << "[ measured ] worst err / bound with sinks and caps: f64 " << worst64 << ", f32 " << worst32 << "\n";
}
