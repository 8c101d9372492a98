// Executor overhead per op by kind: the checked session against the bare cache on the same ops (docs/performance.md
// §3).
#include <benchmark/benchmark.h>

#include <map>

#include "bench/bench_inputs.h"
#include "properties/generate/run_property.h"
#include "properties/runners/builtin.h"
#include "properties/trace/kind_spec.h"

namespace kv = kvconform;

namespace {
/// The deep profile's traces of every property of a kind's reference (20 cases each), made once.
const std::vector<kv::trace>& traces_of(const kv::implementation& impl) {
  static std::map<std::string, std::vector<kv::trace>> made;
  auto [it, fresh] = made.try_emplace(impl.name);
  if (!fresh) return it->second;
  kv::run_options o;
  o.cases = 20, o.max_size = 100, o.deep = true;
  o.on_trace = [&](const kv::trace& t) { it->second.push_back(t); };
  for (const kv::property* p : kv::properties_of(impl.kind))
    if (!p->needs.missing_from(impl.capabilities)) kv::run_property(*p, impl, o);
  return it->second;
}

std::size_t op_count(const std::vector<kv::trace>& ts) {
  std::size_t n = 0;
  for (const auto& t : ts) n += t.ops.size();
  return n;
}

/// Every op through the executor: model, guarded inputs, outcome, decode check, state comparison.
void checked(benchmark::State& s, const kv::implementation* impl) {
  const auto& ts = traces_of(*impl);
  for (auto _ : s)
    for (const auto& t : ts) benchmark::DoNotOptimize(kv::run_trace(t, *impl));
  s.counters["ops"] = static_cast<double>(op_count(ts));
  s.counters["per_op"] = benchmark::Counter(
      static_cast<double>(op_count(ts)), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

/// The same ops on the cache alone, through its adapter, with nothing checked.
void bare(benchmark::State& s, const kv::implementation* impl) {
  const auto& ts = traces_of(*impl);
  for (auto _ : s)
    for (const auto& t : ts) {
      auto subject = impl->make(t.config);
      for (const kv::op& o : t.ops)
        benchmark::DoNotOptimize(subject->apply(kv::call{o, o.k.view(), o.v.view(), o.q.view(), o.mask.view()}));
    }
  s.counters["ops"] = static_cast<double>(op_count(ts));
  s.counters["per_op"] = benchmark::Counter(
      static_cast<double>(op_count(ts)), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

/// One pair per kind, on the kind's reference (the first built-in of the kind).
void register_executor_benchmarks_impl() {
  for (const kv::kind_spec* k : kv::kind_specs())
    for (const kv::implementation& impl : kv::builtin_implementations())
      if (impl.kind == k->kind && impl.group == kv::impl_group::reference) {
        benchmark::RegisterBenchmark(("executor_checked/" + impl.name).c_str(), checked, &impl)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("executor_bare/" + impl.name).c_str(), bare, &impl)
            ->Unit(benchmark::kMillisecond);
        break;
      }
}
}  // namespace

namespace kvconform::bench {
void register_executor_benchmarks() { register_executor_benchmarks_impl(); }
}  // namespace kvconform::bench
