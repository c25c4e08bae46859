// ComputeCommunication on synthetic multi-rank traces: 8 ranks, N
// all-reduces per rank, each after 4 compute kernels. Google Benchmark fits
// the time against N (Complexity): the analysis is meant to be O(N log N)
// at most, close to linear. Figures in README.md.
#include <benchmark/benchmark.h>

#include "src/analysis/communication/communication.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

constexpr int kRanks = 8;
constexpr int kKernelsPerCollective = 4;

std::unique_ptr<Trace> SyntheticRanks(int64_t collectives_per_rank) {
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(trace.get());
  const StringId gemm = b.Intern("gemm"), nccl = b.Intern("ncclKernel_AllReduce_RING_LL_Sum_float");
  const StringId kernel = b.Intern("kernel");
  for (int r = 0; r < kRanks; ++r) {
    const uint32_t compute = b.ThreadTrack(IdValue::Num(r), IdValue::Num(7));
    const uint32_t comm = b.ThreadTrack(IdValue::Num(r), IdValue::Num(9));
    for (uint32_t t : {compute, comm}) {
      b.SetTrackRole(t, TrackKind::kDeviceStream, Layer::kDevice, r);
      b.SetTrackRank(t, r);
    }
    int64_t ts = 0;
    for (int64_t i = 0; i < collectives_per_rank; ++i) {
      for (int k = 0; k < kKernelsPerCollective; ++k, ts += 10'000) b.AddSlice(compute, ts, 9'000, gemm, kernel, -1, 0, 0);
      const int64_t late = (r * 131 + i * 17) % 2'000;  // arrivals differ by rank
      b.AddSlice(comm, ts - 5'000 + late, 20'000 - late, nccl, kernel, -1, 0, 0);
    }
  }
  if (!b.Finalize().ok()) return nullptr;
  return trace;
}

void BM_ComputeCommunication(benchmark::State& state) {
  std::unique_ptr<Trace> trace = SyntheticRanks(state.range(0));
  for (auto _ : state) {
    CommunicationResult r = ComputeCommunication(*trace);
    benchmark::DoNotOptimize(r.cross.matched);
  }
  const int64_t slices = static_cast<int64_t>(trace->slices.size());
  state.SetItemsProcessed(state.iterations() * slices);
  state.SetComplexityN(slices);
}
BENCHMARK(BM_ComputeCommunication)->RangeMultiplier(4)->Range(1 << 10, 1 << 16)->Complexity()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiprof
