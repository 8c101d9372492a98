// The prefill oracle against a double prefill of the same rows (docs/performance.md §6, docs/numerics.md §3.7).
#include <benchmark/benchmark.h>

#include <vector>

#include "bench/bench_inputs.h"
#include "impls/common/attention.h"
#include "oracle/numeric/dd_oracle.h"

namespace kv = kvconform;

namespace {
/// m queries (the last m of n rows are the chunk): the acceptance size, and a small one for the smoke test.
void sizes(benchmark::internal::Benchmark* b) {
  b->Args({16, 256, 64})->Args({512, 4096, 128})->Unit(benchmark::kMillisecond);
}

struct prefill_input {
  kv::attention_problem rows;  // n rows and one query, from the moderate class
  std::size_t m;
  std::vector<double> queries;  // m x d: query i is the class's query scaled by 1 + i / m
};

prefill_input input_of(const benchmark::State& s) {
  prefill_input in{
      kv::bench::moderate_problem(static_cast<std::size_t>(s.range(1)), static_cast<std::size_t>(s.range(2))),
      static_cast<std::size_t>(s.range(0)),
      {}};
  for (std::size_t i = 0; i < in.m; ++i)
    for (double x : in.rows.q) in.queries.push_back(x * (1 + double(i) / double(in.m)));
  return in;
}

/// The reference caches' double prefill: m causal attentions over the rows (impls/common/attention.h).
void prefill_double(benchmark::State& s) {
  const prefill_input in = input_of(s);
  const auto& p = in.rows;
  const std::size_t before = p.n - in.m;
  for (auto _ : s)
    benchmark::DoNotOptimize(kv::attend_causal(
        in.m, p.n, p.d_k, p.d_v, in.queries.data(), [&](std::size_t i) { return p.keys.data() + i * p.d_k; },
        [&](std::size_t i) { return p.values.data() + i * p.d_v; },
        [&](std::size_t query, std::size_t row) { return row <= before + query; }));
}

/// The oracle of a prefill as the model poses it: m problems sharing one block of rows, each masked causally,
/// each evaluated in double-double.
void prefill_oracle(benchmark::State& s) {
  const prefill_input in = input_of(s);
  const std::size_t before = in.rows.n - in.m;
  std::vector<kv::attention_problem> problems(in.m, in.rows);
  for (std::size_t i = 0; i < in.m; ++i) {
    problems[i].q.assign(in.queries.begin() + static_cast<std::ptrdiff_t>(i * in.rows.d_k),
                         in.queries.begin() + static_cast<std::ptrdiff_t>((i + 1) * in.rows.d_k));
    problems[i].live.assign(in.rows.n, 0);
    for (std::size_t j = 0; j <= before + i; ++j) problems[i].live[j] = 1;
  }
  for (auto _ : s)
    for (const auto& p : problems) benchmark::DoNotOptimize(kv::attention_oracle_dd(p));
}
}  // namespace

BENCHMARK(prefill_double)->Apply(sizes);
BENCHMARK(prefill_oracle)->Apply(sizes);
