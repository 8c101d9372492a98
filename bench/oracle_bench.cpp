// Oracle time per decode against the reference's double decode of the same rows (docs/performance.md §1).
#include <benchmark/benchmark.h>

#include <boost/multiprecision/float128.hpp>

#include "bench/bench_inputs.h"
#include "impls/flat/flat.h"
#include "oracle/numeric/attention_oracle.h"
#include "properties/executor/decode_check.h"
// The same file builds against a tree from before the double-double oracle, for the "before"
// column of docs/performance.md (bench/performance.py --before-bench).
#if __has_include("oracle/numeric/dd_oracle.h")
#include "oracle/numeric/dd_oracle.h"
#define KVCONFORM_BENCH_DD 1
#endif

namespace kv = kvconform;

namespace {
/// The sizes of the acceptance figures: a small head, a production head, a long context.
void sizes(benchmark::internal::Benchmark* b) {
  b->Args({256, 64})->Args({4096, 128})->Args({32768, 128})->Unit(benchmark::kMicrosecond);
}

kv::attention_problem problem_of(const benchmark::State& s) {
  return kv::bench::moderate_problem(static_cast<std::size_t>(s.range(0)), static_cast<std::size_t>(s.range(1)));
}

/// The reference flat cache's decode_step: the double computation the oracle is compared with.
void reference_decode(benchmark::State& s) {
  const auto p = problem_of(s);
  kv::flat cache(p.n, p.d_k, p.d_v);
  cache.append(kv::bench::matrix(p.keys, p.n, p.d_k), kv::bench::matrix(p.values, p.n, p.d_v));
  const kv::array_view q(p.q.data(), {p.d_k});
  for (auto _ : s) benchmark::DoNotOptimize(kv::decode_step(q, cache));
}

#ifdef KVCONFORM_BENCH_DD
void oracle_double_double(benchmark::State& s) {
  const auto p = problem_of(s);
  for (auto _ : s) benchmark::DoNotOptimize(kv::attention_oracle_dd(p));
}

void oracle_double_double_generic(benchmark::State& s) {
  const auto p = problem_of(s);
  for (auto _ : s) benchmark::DoNotOptimize(kv::attention_oracle_dd(p, kv::dd_kernels::generic));
}
#endif

void oracle_float128(benchmark::State& s) {
  const auto p = problem_of(s);
  for (auto _ : s) benchmark::DoNotOptimize(kv::attention_oracle<boost::multiprecision::float128>(p));
}

/// The whole judgement of one decode as the executor makes it: oracle, bound, edge rules, comparison.
void check_decode(benchmark::State& s) {
  const auto p = problem_of(s);
  kv::flat cache(p.n, p.d_k, p.d_v);
  cache.append(kv::bench::matrix(p.keys, p.n, p.d_k), kv::bench::matrix(p.values, p.n, p.d_v));
  const auto got = kv::decode_step(kv::array_view(p.q.data(), {p.d_k}), cache);
  for (auto _ : s) {
    const auto v = kv::check_decode(p, got.output.data(), got.weights.data(), {});
    if (!v.check.empty()) s.SkipWithError(v.message.c_str());
  }
}
}  // namespace

BENCHMARK(reference_decode)->Apply(sizes);
#ifdef KVCONFORM_BENCH_DD
BENCHMARK(oracle_double_double)->Apply(sizes);
BENCHMARK(oracle_double_double_generic)->Apply(sizes);
#endif
BENCHMARK(oracle_float128)->Apply(sizes);
BENCHMARK(check_decode)->Apply(sizes);
