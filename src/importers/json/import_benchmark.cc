// Hot-path benchmarks: decimal timestamps, value scanning, interning, and a
// whole import of a real trace (JSON and native). Figures in README.md.
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "src/base/decimal.h"
#include "src/base/string_pool.h"
#include "src/importers/common/importer_registry.h"
#include "src/importers/json/chrome_json_importer.h"
#include "src/importers/json/json_value_scanner.h"
#include "src/model/native_file.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

void BM_ParseMicrosToNanos(benchmark::State& state) {
  const char* texts[] = {"1736408883704643.212", "4458676983543.183", "1623142623529248", "25.118000000000052"};
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ParseMicrosToNanos(texts[i++ & 3]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseMicrosToNanos);

void BM_ScanEventObjects(benchmark::State& state) {
  std::string event = R"({"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 1795977647723532, "dur": 120, "args": {"External id": 7, "Input Dims": [[8, 3, 64, 64], [16, 3, 3, 3], [16]], "Call stack": "a.py(1): f;b.py(2): g;nn.Module: Conv2d_0;"}}, )";
  std::string text;
  while (text.size() < (1 << 20)) text += event;
  for (auto _ : state) {
    size_t pos = 0, events = 0;
    JsonValueScanner scanner;
    while (pos < text.size() && text[pos] == '{') {
      scanner.Start('{');
      size_t n = scanner.Feed(text.data() + pos, text.size() - pos);
      if (n >= JsonValueScanner::kInvalid) break;
      pos += n + 2;
      ++events;
    }
    benchmark::DoNotOptimize(events);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ScanEventObjects);

void BM_InternRepeated(benchmark::State& state) {
  StringPool pool;
  std::vector<std::string> names;
  for (int i = 0; i < 500; ++i) names.push_back("aten::op_" + std::to_string(i) + std::string(i % 40, 'x'));
  std::mt19937 rng(1);
  std::vector<uint32_t> order(4096);
  for (auto& o : order) o = rng() % names.size();
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(pool.Intern(names[order[i++ & 4095]]));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InternRepeated);

void BM_ImportSampleJson(benchmark::State& state) {
  size_t bytes = 0;
  for (auto _ : state) {
    auto trace = ImportTrace(AIPROF_SAMPLE_TRACE);
    if (!trace.ok()) state.SkipWithError(trace.status().message().c_str());
    benchmark::DoNotOptimize(trace);
  }
  FILE* f = std::fopen(AIPROF_SAMPLE_TRACE, "rb");
  if (f) {
    std::fseek(f, 0, SEEK_END);
    bytes = static_cast<size_t>(std::ftell(f));
    std::fclose(f);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_ImportSampleJson)->Unit(benchmark::kMillisecond);

void BM_LoadSampleNative(benchmark::State& state) {
  auto trace = ImportTrace(AIPROF_SAMPLE_TRACE);
  std::string path = "/tmp/aiprof_bench_sample.aiprof";
  if (!trace.ok() || !WriteNativeFile(*trace.value(), path).ok()) {
    state.SkipWithError("cannot prepare the native file");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(ReadNativeFile(path));
  std::remove(path.c_str());
}
BENCHMARK(BM_LoadSampleNative)->Unit(benchmark::kMillisecond);

// The parallel parse phase alone (tokenizer + N workers + ordered merge, no
// Finalize) of the shipped sample (a real torch.profiler trace), cut into
// 16 KiB batches so its 440 KB spread over the workers. Arg: workers.
void BM_ParseSampleWorkers(benchmark::State& state) {
  const std::string path = AIPROF_SAMPLE_TRACE;
  ChromeJsonOptions options;
  options.workers = static_cast<size_t>(state.range(0));
  options.batch_bytes = 16 << 10;
  size_t bytes = 0;
  for (auto _ : state) {
    Trace trace;
    TraceBuilder builder(&trace);
    Status st = ImportChromeJson(path, &builder, options);
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    bytes = static_cast<size_t>(trace.metadata.size());  // keep the trace alive until here
    benchmark::DoNotOptimize(bytes);
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f) {
    std::fseek(f, 0, SEEK_END);
    bytes = static_cast<size_t>(std::ftell(f));
    std::fclose(f);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_ParseSampleWorkers)->Arg(0)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace aiprof
