// Reference decode time against a plain read of the same K and V bytes, flat and paged (docs/performance.md §2).
#include <benchmark/benchmark.h>

#include "bench/bench_inputs.h"
#include "impls/flat/flat.h"
#include "impls/paged/paged.h"

namespace kv = kvconform;

namespace {
constexpr std::size_t block = 16;  ///< rows per paged block, a common production choice

void sizes(benchmark::internal::Benchmark* b) { b->Args({256, 64})->Args({4096, 128})->Unit(benchmark::kMicrosecond); }

struct filled_flat {
  kv::attention_problem p;
  kv::flat cache;
  explicit filled_flat(const benchmark::State& s)
      : p(kv::bench::moderate_problem(static_cast<std::size_t>(s.range(0)), static_cast<std::size_t>(s.range(1)))),
        cache(p.n, p.d_k, p.d_v) {
    cache.append(kv::bench::matrix(p.keys, p.n, p.d_k), kv::bench::matrix(p.values, p.n, p.d_v));
  }
};

/// Every double of K and V summed with eight independent accumulators: memory speed, the fastest
/// any decode could touch the same bytes.
double plain_sum(const double* a, std::size_t n) {
  double acc[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (std::size_t l = 0; l < 8; ++l) acc[l] += a[i + l];
  for (; i < n; ++i) acc[0] += a[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

void plain_read(benchmark::State& s) {
  const filled_flat f(s);
  const auto k = f.cache.keys(), v = f.cache.values();
  for (auto _ : s) {
    benchmark::DoNotOptimize(plain_sum(k.data(), static_cast<std::size_t>(k.size())));
    benchmark::DoNotOptimize(plain_sum(v.data(), static_cast<std::size_t>(v.size())));
  }
  s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations()) * (k.size() + v.size()) * 8);
}

void flat_decode(benchmark::State& s) {
  const filled_flat f(s);
  const kv::array_view q(f.p.q.data(), {f.p.d_k});
  for (auto _ : s) benchmark::DoNotOptimize(kv::decode_step(q, f.cache));
  s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations() * f.p.n * (f.p.d_k + f.p.d_v) * 8));
}

/// The same rows in a paged cache of 16-row blocks, appended so that blocks come off the pool in
/// its own order; the decode walks the block table.
void paged_decode(benchmark::State& s) {
  const auto p =
      kv::bench::moderate_problem(static_cast<std::size_t>(s.range(0)), static_cast<std::size_t>(s.range(1)));
  kv::paged cache((p.n + block - 1) / block, block, p.d_k, p.d_v);
  const auto seq = cache.create();
  cache.append(seq, kv::bench::matrix(p.keys, p.n, p.d_k), kv::bench::matrix(p.values, p.n, p.d_v));
  const kv::array_view q(p.q.data(), {p.d_k});
  for (auto _ : s) benchmark::DoNotOptimize(cache.decode_step(seq, q));
  s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations() * p.n * (p.d_k + p.d_v) * 8));
}
}  // namespace

BENCHMARK(plain_read)->Apply(sizes);
BENCHMARK(flat_decode)->Apply(sizes);
BENCHMARK(paged_decode)->Apply(sizes);
