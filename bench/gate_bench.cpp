// Cases per second per property of the quick profile on every reference (docs/performance.md §4).
#include <benchmark/benchmark.h>

#include "bench/bench_inputs.h"
#include "properties/generate/run_property.h"
#include "properties/runners/builtin.h"

namespace kv = kvconform;

namespace {
void cases(benchmark::State& s, const kv::implementation* impl, const kv::property* p) {
  const kv::run_options o;  // the quick profile, seed 1: what `kvconform gate` runs
  double total = 0;
  for (auto _ : s) {
    const kv::property_run r = kv::run_property(*p, *impl, o);
    if (r.fail || !r.error.empty()) s.SkipWithError("the property failed on a reference");
    total += r.cases;
  }
  s.counters["cases_per_s"] = benchmark::Counter(total, benchmark::Counter::kIsRate);
}

void register_gate_benchmarks_impl() {
  for (const kv::implementation& impl : kv::builtin_implementations()) {
    if (impl.group != kv::impl_group::reference) continue;
    for (const kv::property* p : kv::properties_of(impl.kind))
      if (!p->needs.missing_from(impl.capabilities))
        benchmark::RegisterBenchmark(("cases/" + impl.name + "/" + p->name).c_str(), cases, &impl, p)
            ->Unit(benchmark::kMillisecond);
  }
}
}  // namespace

namespace kvconform::bench {
void register_gate_benchmarks() { register_gate_benchmarks_impl(); }
}  // namespace kvconform::bench
