// Cost of the tracing SDK's hot path (README "Tracing SDK" has the figures).
//
// The runtime reads its environment when the program loads, so this binary
// sets it first (a constructor that runs before the runtime's): ring mode
// keeps memory bounded however many iterations Google Benchmark picks, and
// the file written at exit is removed. Run with AIPROF_MODE=record to
// measure record mode instead (memory then grows by 16 bytes per event).
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <string>

#include <benchmark/benchmark.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "aiprof/aiprof.h"
#include "aiprof/aiprof.hpp"
#include "src/monitor/live_client.h"
#include "src/sdk/sdk_internal.h"

namespace {

void RemoveBenchmarkFile() { unlink(aiprof_output_path()); }

__attribute__((constructor(101))) void ConfigureSdkForBenchmarks() {
  setenv("AIPROF_MODE", "ring", /*overwrite=*/0);
  setenv("AIPROF_RING_MB", "16", 0);
  if (!getenv("AIPROF_OUTPUT")) {
    setenv("AIPROF_OUTPUT", "/tmp/aiprof-benchmark-%p.aiprof", 1);
    atexit(&RemoveBenchmarkFile);  // runs after the runtime's own exit write
  }
}

// begin + end of one span while recording: two events.
void BM_SdkSpanPair(benchmark::State& state) {
  aiprof_set_enabled(1);
  for (auto _ : state) {
    aiprof_span_begin("bench_span");
    aiprof_span_end();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["bytes_per_event"] = benchmark::Counter(sizeof(aiprof::sdkrt::Event), benchmark::Counter::kAvgThreads);
}
BENCHMARK(BM_SdkSpanPair)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_SdkSpanPair)->Threads(2)->Repetitions(3)->ReportAggregatesOnly(true);

// The C++ scope macro: the same two calls.
void BM_SdkScopeMacro(benchmark::State& state) {
  aiprof_set_enabled(1);
  for (auto _ : state) {
    AIPROF_SCOPE("bench_scope");
  }
}
BENCHMARK(BM_SdkScopeMacro);

// Disabled: the header's inline check, the same one relaxed load as with
// AIPROF_ENABLE=0 (aiprof_set_enabled(0) clears the flag that Init clears).
void BM_SdkSpanPairDisabled(benchmark::State& state) {
  aiprof_set_enabled(0);
  for (auto _ : state) {
    aiprof_span_begin("bench_span");
    aiprof_span_end();
  }
  aiprof_set_enabled(1);
}
BENCHMARK(BM_SdkSpanPairDisabled)->Repetitions(5)->ReportAggregatesOnly(true);

// Disabled, through the functions rather than the header's inline check
// (what a binding or a call through a pointer pays).
void BM_SdkSpanPairDisabledCall(benchmark::State& state) {
  aiprof_set_enabled(0);
  for (auto _ : state) {
    (aiprof_span_begin)("bench_span");
    (aiprof_span_end)();
  }
  aiprof_set_enabled(1);
}
BENCHMARK(BM_SdkSpanPairDisabledCall)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_SdkCounter(benchmark::State& state) {
  aiprof_set_enabled(1);
  double v = 0;
  for (auto _ : state) aiprof_counter("bench_counter", v += 1);
}
BENCHMARK(BM_SdkCounter);

// A request begun and ended on one thread (an atomic id, three events).
void BM_SdkRequest(benchmark::State& state) {
  aiprof_set_enabled(1);
  for (auto _ : state) aiprof_request_end(aiprof_request_begin("bench_request"));
}
BENCHMARK(BM_SdkRequest);

// The same request with aiprof monitor's live channel attached: the SDK
// also reads CLOCK_MONOTONIC at both ends and pushes a 32-byte record
// (BM_SdkRequest is the same call with no monitor: one pointer test more
// than before the live channel existed).
void BM_SdkRequestLiveAttached(benchmark::State& state) {
  aiprof_set_enabled(1);
  auto client = aiprof::LiveClient::Create(getpid());
  if (!client.ok() || !(*client)->WaitAttached(5'000'000'000, [] { return true; }).ok()) {
    state.SkipWithError("the live channel did not attach");
    return;
  }
  uint64_t n = 0;
  for (auto _ : state) {
    aiprof_request_end(aiprof_request_begin("bench_request"));
    if ((++n & 0xffff) == 0) {
      (*client)->Heartbeat();
      (*client)->Drain([](const aiprof::live::Record&) {});
    }
  }
  client->reset();
  // Let the live thread see the segment go before the next benchmark.
  usleep(100000);
}
BENCHMARK(BM_SdkRequestLiveAttached)->Repetitions(3)->ReportAggregatesOnly(true);

// A thread-per-request server's pattern: a thread that records one span and
// exits (the cost includes pthread_create/join). The first span of each new
// thread registers it: before buffers were reused that mapped and faulted
// in a fresh 64 KiB (ring: 64 KiB populated), now it takes an idle buffer.
void* OneSpanThread(void*) {
  aiprof_span_begin("churn");
  aiprof_span_end();
  return nullptr;
}
void BM_SdkThreadChurn(benchmark::State& state) {
  aiprof_set_enabled(1);
  for (auto _ : state) {
    pthread_t t;
    pthread_create(&t, nullptr, &OneSpanThread, nullptr);
    pthread_join(t, nullptr);
  }
}
BENCHMARK(BM_SdkThreadChurn)->Repetitions(3)->ReportAggregatesOnly(true);

// The same threads without the SDK: what pthread_create/join cost alone.
void* NoSpanThread(void*) { return nullptr; }
void BM_ThreadChurnBaseline(benchmark::State& state) {
  for (auto _ : state) {
    pthread_t t;
    pthread_create(&t, nullptr, &NoSpanThread, nullptr);
    pthread_join(t, nullptr);
  }
}
BENCHMARK(BM_ThreadChurnBaseline)->Repetitions(3)->ReportAggregatesOnly(true);

// The clock reads the budget is made of.
#if defined(__x86_64__)
void BM_Rdtsc(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(__rdtsc());
}
BENCHMARK(BM_Rdtsc);
#endif

void BM_ClockGettimeMonotonic(benchmark::State& state) {
  timespec ts;
  for (auto _ : state) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    benchmark::DoNotOptimize(ts);
  }
}
BENCHMARK(BM_ClockGettimeMonotonic);

}  // namespace
