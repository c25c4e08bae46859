// The topology graph and the exports on synthetic two-rank GPU traces: per
// rank a host thread launching N kernels (cudaLaunchKernel + kernel linked by
// correlation), each fourth an NCCL all-reduce on a second stream. Google
// Benchmark fits the time against the slice count (Complexity): both are
// meant to be linear (the analyses the topology runs are O(N log N)).
// Figures in README.md.
#include <benchmark/benchmark.h>

#include <memory>

#include "src/analysis/communication/communication.h"
#include "src/analysis/pipeline/pipeline_stages.h"
#include "src/model/trace_builder.h"
#include "src/view/export/chrome_json_export.h"
#include "src/view/export/perfetto_export.h"
#include "src/view/topology/topology_graph.h"
#include "src/view/view_sink.h"

namespace aiprof {
namespace {

constexpr int kRanks = 2;

std::unique_ptr<Trace> SyntheticLaunches(int64_t launches_per_rank) {
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(trace.get());
  const StringId launch = b.Intern("cudaLaunchKernel"), runtime = b.Intern("cuda_runtime");
  const StringId gemm = b.Intern("gemm"), nccl = b.Intern("ncclKernel_AllReduce_RING_LL_Sum_float");
  const StringId kernel = b.Intern("kernel");
  int64_t correlation = 1;
  for (int r = 0; r < kRanks; ++r) {
    const uint32_t host = b.ThreadTrack(IdValue::Num(100 + r), IdValue::Num(100 + r));
    const uint32_t compute = b.ThreadTrack(IdValue::Num(r), IdValue::Num(7));
    const uint32_t comm = b.ThreadTrack(IdValue::Num(r), IdValue::Num(9));
    for (uint32_t t : {host, compute, comm}) b.SetTrackRank(t, r);
    for (uint32_t t : {compute, comm}) b.SetTrackRole(t, TrackKind::kDeviceStream, Layer::kDevice, r);
    for (int64_t i = 0; i < launches_per_rank; ++i, ++correlation) {
      const int64_t ts = i * 10'000;
      b.AddSlice(host, ts, 3'000, launch, runtime, correlation, 0, 0);
      if (i % 4 == 3) b.AddSlice(comm, ts + 4'000 + r * 500, 5'000, nccl, kernel, correlation, 0, 0);
      else b.AddSlice(compute, ts + 4'000, 5'000, gemm, kernel, correlation, 0, 0);
    }
  }
  if (!b.Finalize().ok()) return nullptr;
  return trace;
}

class CountingSink : public ViewSink {
 public:
  Status Append(std::string_view bytes) override {
    bytes_ += bytes.size();
    return OkStatus();
  }
  size_t bytes_ = 0;
};

void BM_BuildTopology(benchmark::State& state) {
  std::unique_ptr<Trace> trace = SyntheticLaunches(state.range(0));
  for (auto _ : state) {
    CommunicationResult comm = ComputeCommunication(*trace);
    PipelineResult pipeline = ComputePipelineStages(*trace);
    Topology g = BuildTopology(*trace, comm, pipeline);
    benchmark::DoNotOptimize(g.edges.size());
  }
  const int64_t slices = static_cast<int64_t>(trace->slices.size());
  state.SetItemsProcessed(state.iterations() * slices);
  state.SetComplexityN(slices);
}
BENCHMARK(BM_BuildTopology)->RangeMultiplier(8)->Range(1 << 10, 1 << 19)->Complexity()->Unit(benchmark::kMillisecond);

void BM_ExportPerfettoScaling(benchmark::State& state) {
  std::unique_ptr<Trace> trace = SyntheticLaunches(state.range(0));
  for (auto _ : state) {
    CountingSink sink;
    benchmark::DoNotOptimize(ExportPerfetto(*trace, &sink).ok());
  }
  const int64_t slices = static_cast<int64_t>(trace->slices.size());
  state.SetItemsProcessed(state.iterations() * slices);
  state.SetComplexityN(slices);
}
BENCHMARK(BM_ExportPerfettoScaling)->RangeMultiplier(8)->Range(1 << 10, 1 << 19)->Complexity()->Unit(benchmark::kMillisecond);

void BM_ExportChromeJsonScaling(benchmark::State& state) {
  std::unique_ptr<Trace> trace = SyntheticLaunches(state.range(0));
  for (auto _ : state) {
    CountingSink sink;
    benchmark::DoNotOptimize(ExportChromeJson(*trace, &sink).ok());
  }
  const int64_t slices = static_cast<int64_t>(trace->slices.size());
  state.SetItemsProcessed(state.iterations() * slices);
  state.SetComplexityN(slices);
}
BENCHMARK(BM_ExportChromeJsonScaling)->RangeMultiplier(8)->Range(1 << 10, 1 << 19)->Complexity()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiprof
