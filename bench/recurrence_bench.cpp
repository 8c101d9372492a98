// The recurrence oracle (with its bound, one pass) against a plain double recurrence over the same tokens
// (docs/numerics.md §3.9 quotes the ratio).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "oracle/numeric/recurrence.h"

namespace kv = kvconform;

namespace {
/// T tokens of a head with d_k = d_v = d and a convolution of width 4: random inputs, decays in [-1, 0].
kv::recurrence_problem problem_of(const benchmark::State& s, kv::recurrence_form form) {
  const auto T = static_cast<std::size_t>(s.range(0)), d = static_cast<std::size_t>(s.range(1));
  kv::recurrence_problem p{form, d, d, 4, {}, {}, {}, {}};
  std::mt19937_64 rng(7);
  std::normal_distribution<double> gauss;
  std::uniform_real_distribution<double> unit(0, 1);
  for (std::size_t i = 0; i < p.width * p.channels(); ++i) p.conv.push_back(gauss(rng) / 2);
  for (std::size_t i = 0; i < T * p.channels(); ++i) p.x.push_back(gauss(rng));
  for (std::size_t t = 0; t < T; ++t) p.g.push_back(-unit(rng)), p.beta.push_back(unit(rng));
  return p;
}

/// What a double cache computes per token: the convolution, for the delta rule the normalisations and the
/// projection k^T S, the update and the read-out.
void plain(const kv::recurrence_problem& p, std::vector<double>& S, std::vector<double>& out) {
  const std::size_t dk = p.d_k, dv = p.d_v, ch = p.channels();
  const bool delta = p.form == kv::recurrence_form::delta;
  std::vector<double> xc(ch), proj(dv);
  S.assign(dk * dv, 0.0), out.assign(p.steps() * dv, 0.0);
  for (std::size_t t = 0; t < p.steps(); ++t) {
    for (std::size_t c = 0; c < ch; ++c) {
      double s = 0;
      for (std::size_t i = 0; i < p.width && i <= t; ++i) s += p.conv[i * ch + c] * p.x[(t - i) * ch + c];
      xc[c] = s;
    }
    double *q = xc.data(), *k = q + dk, *v = k + dk;
    const double a = std::exp(p.g[t]), b = delta ? p.beta[t] : 1.0;
    if (delta)
      for (double* u : {q, k}) {
        double n = 0;
        for (std::size_t j = 0; j < dk; ++j) n += u[j] * u[j];
        for (std::size_t j = 0; j < dk; ++j) u[j] /= std::sqrt(n);
      }
    for (std::size_t c = 0; c < dv; ++c) proj[c] = 0;
    if (delta)
      for (std::size_t j = 0; j < dk; ++j)
        for (std::size_t c = 0; c < dv; ++c) proj[c] += k[j] * S[j * dv + c];
    for (std::size_t j = 0; j < dk; ++j)
      for (std::size_t c = 0; c < dv; ++c) S[j * dv + c] = a * (S[j * dv + c] - b * k[j] * proj[c]) + b * k[j] * v[c];
    for (std::size_t j = 0; j < dk; ++j)
      for (std::size_t c = 0; c < dv; ++c) out[t * dv + c] += q[j] * S[j * dv + c];
  }
}

template <kv::recurrence_form form>
void recurrence_double(benchmark::State& s) {
  const auto p = problem_of(s, form);
  std::vector<double> S, out;
  for (auto _ : s) {
    plain(p, S, out);
    benchmark::DoNotOptimize(out.data());
  }
}

template <kv::recurrence_form form>
void recurrence_oracle(benchmark::State& s) {
  const auto p = problem_of(s, form);
  for (auto _ : s) benchmark::DoNotOptimize(kv::run_recurrence(p, {}));
}

void sizes(benchmark::internal::Benchmark* b) { b->Args({256, 64})->Args({256, 128})->Unit(benchmark::kMillisecond); }
}  // namespace

BENCHMARK(recurrence_double<kv::recurrence_form::decay>)->Apply(sizes);
BENCHMARK(recurrence_oracle<kv::recurrence_form::decay>)->Apply(sizes);
BENCHMARK(recurrence_double<kv::recurrence_form::delta>)->Apply(sizes);
BENCHMARK(recurrence_oracle<kv::recurrence_form::delta>)->Apply(sizes);
