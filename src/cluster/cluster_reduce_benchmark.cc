// The cluster reduce on synthetic digests: N ranks (64 … 4096), each with
// 100 steps of 10 all-reduces (1,000 collective instances), 256 ops with
// sketches; per-rank clock offsets of up to ±40 ms and one slow rank. Each
// iteration parses the serialized digests (as the reduce reads files) and
// reduces them. Google Benchmark fits the time against N: the reduce is
// meant to be linear in ranks (× instances). Figures in README.md.
#include <benchmark/benchmark.h>

#include <random>

#include "src/cluster/cluster_reduce.h"
#include "src/cluster/digest.h"
#include "src/model/event_kind.h"

namespace aiprof {
namespace {

constexpr int kSteps = 100, kCollectivesPerStep = 10, kOps = 256;

std::vector<std::string> SyntheticDigests(int ranks) {
  std::vector<std::string> out(static_cast<size_t>(ranks));
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> offset(-40'000'000, 40'000'000), jitter(0, 20'000);
  for (int r = 0; r < ranks; ++r) {
    RankDigest d;
    d.rank = r;
    d.world_size = ranks;
    d.host = "node" + std::to_string(r / 8);
    d.source = "rank-" + std::to_string(r) + ".json";
    d.strings = {"", "kernel", "default_pg"};
    const int64_t off = offset(rng);
    for (int s = 0; s < kSteps; ++s) {
      const int64_t start = s * 100'000'000LL;
      d.steps.push_back(DigestStep{s, start + off, 99'000'000, -1, -1, -1, -1, -1, -1});
      for (int c = 0; c < kCollectivesPerStep; ++c) {
        const int64_t arrival = start + c * 10'000'000LL + 5'000'000 + jitter(rng) + (r == ranks / 3 ? 1'000'000 : 0);
        d.collectives.push_back(DigestCollective{2, 0, 0, arrival + off, start + c * 10'000'000LL + 9'000'000 + off,
                                                 4e6, s});
      }
    }
    for (int o = 0; o < kOps; ++o) {
      d.strings.push_back("op_" + std::to_string(o));
      DigestOp op;
      op.name = static_cast<uint32_t>(d.strings.size() - 1);
      op.category = 1;
      op.kind = static_cast<uint8_t>(EventKind::kKernel);
      for (int k = 0; k < 200; ++k) op.sketch.Add(1000 + (o * 37 + k * 101) % 50'000);
      op.count = op.sketch.count();
      op.total_ns = static_cast<int64_t>(op.count) * 25'000 + (r == ranks / 3 && o == 5 ? 100'000'000 : 0);
      d.ops.push_back(std::move(op));
    }
    SerializeDigest(d, &out[static_cast<size_t>(r)]);
  }
  return out;
}

void BM_ClusterReduce(benchmark::State& state) {
  const std::vector<std::string> digests = SyntheticDigests(static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (const std::string& d : digests) bytes += d.size();
  for (auto _ : state) {
    ClusterReducer reducer(ClusterOptions{});
    for (const std::string& b : digests) {
      StatusOr<RankDigest> d = ParseDigest(b, "bench");
      reducer.Add(*d);
    }
    ClusterResult r = reducer.Finish();
    if (r.slow_ranks.empty() || r.slow_ranks[0].rank != state.range(0) / 3) state.SkipWithError("slow rank not found");
    benchmark::DoNotOptimize(r);
  }
  state.SetComplexityN(state.range(0));
  state.counters["digest_bytes_per_rank"] = static_cast<double>(bytes) / static_cast<double>(digests.size());
}
BENCHMARK(BM_ClusterReduce)->RangeMultiplier(4)->Range(64, 4096)->Unit(benchmark::kMillisecond)->Complexity();

}  // namespace
}  // namespace aiprof
