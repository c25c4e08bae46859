// Export hot paths: the model → Perfetto protobuf and → Chrome JSON, per
// event, on the shipped 440 KB CPU sample (AIPROF_SAMPLE_TRACE) imported once.
#include <benchmark/benchmark.h>

#include <memory>

#include "src/importers/common/importer_registry.h"
#include "src/view/export/chrome_json_export.h"
#include "src/view/export/perfetto_export.h"
#include "src/view/view_sink.h"

namespace aiprof {
namespace {

// Counts bytes, keeps nothing: measures the writers, not memory traffic.
class CountingSink : public ViewSink {
 public:
  Status Append(std::string_view bytes) override {
    bytes_ += bytes.size();
    return OkStatus();
  }
  size_t bytes_ = 0;
};

const Trace& Sample() {
  static std::unique_ptr<Trace> trace = [] {
    auto r = ImportTrace(AIPROF_SAMPLE_TRACE);
    return r.ok() ? std::move(r).value() : nullptr;
  }();
  return *trace;
}

void BM_ExportPerfetto(benchmark::State& state) {
  const Trace& t = Sample();
  size_t bytes = 0;
  for (auto _ : state) {
    CountingSink sink;
    benchmark::DoNotOptimize(ExportPerfetto(t, &sink).ok());
    bytes = sink.bytes_;
  }
  const double events = static_cast<double>(t.slices.size() + t.instants.size() + t.counters.size());
  state.counters["events/s"] = benchmark::Counter(events, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ExportPerfetto)->Unit(benchmark::kMillisecond);

void BM_ExportChromeJson(benchmark::State& state) {
  const Trace& t = Sample();
  size_t bytes = 0;
  for (auto _ : state) {
    CountingSink sink;
    benchmark::DoNotOptimize(ExportChromeJson(t, &sink).ok());
    bytes = sink.bytes_;
  }
  const double events = static_cast<double>(t.slices.size() + t.instants.size() + t.counters.size());
  state.counters["events/s"] = benchmark::Counter(events, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ExportChromeJson)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiprof
