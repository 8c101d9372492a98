// The benchmark program: the per-implementation benchmarks are registered here, then Google Benchmark runs.
#include <benchmark/benchmark.h>

#include "bench/bench_inputs.h"

int main(int argc, char** argv) {
  kvconform::bench::register_executor_benchmarks();
  kvconform::bench::register_gate_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
