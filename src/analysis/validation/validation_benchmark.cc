// `validate` on large samples: Validate() over N latency samples per side
// (log-normal, the after side 1% slower), every metric with its bootstrap
// (10,000 resamples), rank test and effect sizes. Google Benchmark fits the
// time against N (Complexity); the figure for N = 1,000,000 is in
// docs/validation.md. Run: build/aiprof_benchmarks --benchmark_filter=Validate
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/statistics.h"

namespace aiprof {
namespace {

RunSamples LogNormalRun(int64_t n, double scale, uint64_t seed) {
  RunSamples r;
  r.label = "synthetic";
  r.source_kind = "json";
  r.unit = "value";
  std::mt19937_64 rng(seed);
  r.latency_ns.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    double u = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
    double v = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
    double z = std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
    r.latency_ns.push_back(scale * 1e6 * std::exp(0.25 * z));
  }
  return r;
}

void BM_ValidateLatency(benchmark::State& state) {
  RunSamples before = LogNormalRun(state.range(0), 1.0, 1), after = LogNormalRun(state.range(0), 1.01, 2);
  ValidationOptions o;
  for (auto _ : state) {
    ValidationResult r = Validate(before, after, o);
    benchmark::DoNotOptimize(r);
  }
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_ValidateLatency)->RangeMultiplier(10)->Range(1000, 1'000'000)->Unit(benchmark::kMillisecond)->Complexity();

// The resampling bootstrap (both sides together at most
// kBootstrapResampleMaxSamples values): the median's difference with 10,000
// resamples, N values per side, as validate draws it for a p50 on small runs.
void BM_BootstrapResample(benchmark::State& state) {
  RunSamples before = LogNormalRun(state.range(0), 1.0, 1), after = LogNormalRun(state.range(0), 1.01, 2);
  BootstrapOptions o;
  for (auto _ : state) {
    BootstrapInterval r = BootstrapQuantileDifference(before.latency_ns, after.latency_ns, 0.5, o);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_BootstrapResample)->Arg(30)->Arg(500)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiprof
