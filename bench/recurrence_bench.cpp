// The recurrence oracle (with its bound, one pass) against the double recurrence head over the same tokens
// (docs/numerics.md §3.9 quotes the ratio).
#include <benchmark/benchmark.h>

#include <random>

#include "impls/common/recurrent_head.h"
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

template <kv::recurrence_form form>
void recurrence_double(benchmark::State& s) {
  const auto p = problem_of(s, form);
  std::vector<double> out(p.steps() * p.d_v);
  for (auto _ : s) {
    kv::recurrent_head<double> head(p.form, p.d_k, p.d_v, p.width, p.conv);
    head.step(p.x.data(), p.g.data(), p.beta.data(), p.steps(), out.data());
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
