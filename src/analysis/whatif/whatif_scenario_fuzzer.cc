// libFuzzer harness for what-if scenarios (`aiprof whatif --scenario`, a
// suggestion's scenario, a card's stored scenario): arbitrary text through
// ParseScenario, CanonicalScenarioText and JudgeOnMean, and every scenario
// that parses replayed by PredictWhatIf over a small hand-made trace
// (labelled: written for this harness) with a data loader, a module, kernel
// launches on two streams, a synchronisation, a copy, an NCCL kernel and a
// checkpoint, so that each clause finds something to change.
//
// Properties checked (a failure aborts, and libFuzzer keeps the input):
// the canonical text of a scenario parses to itself (the knowledge
// database finds past cases under it); the replay's figures are finite and
// not negative, and its interval holds its prediction.
// Seeds: the scenarios of test/data/pairs/pairs.yaml and docs/whatif.md
// (scripts/fuzz.sh).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/scenario/scenario.h"
#include "src/analysis/whatif/whatif.h"
#include "test/fuzz/fuzz_trace.h"

namespace aiprof {
namespace {

// µs. Step 1 is a warm-up-sized copy of step 2 so the window has steady steps.
constexpr char kTrace[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":200},
  {"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":1,"tid":1,"ts":0,"dur":40},
  {"ph":"X","cat":"cpu_op","name":"aten::stack","pid":1,"tid":1,"ts":5,"dur":30},
  {"ph":"X","cat":"python_function","name":"nn.Module: Net_0","pid":1,"tid":1,"ts":41,"dur":120},
  {"ph":"X","cat":"cpu_op","name":"aten::to","pid":1,"tid":1,"ts":42,"dur":8},
  {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":43,"dur":5,"args":{"correlation":1}},
  {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":48,"dur":6,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":52,"dur":10},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":53,"dur":4,"args":{"correlation":2}},
  {"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":58,"dur":40,"args":{"device":0,"stream":7,"correlation":2}},
  {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":63,"dur":6},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":64,"dur":3,"args":{"correlation":3}},
  {"ph":"X","cat":"kernel","name":"vectorized_elementwise_kernel","pid":0,"tid":7,"ts":99,"dur":5,"args":{"device":0,"stream":7,"correlation":3}},
  {"ph":"X","cat":"cpu_op","name":"nccl:all_reduce","pid":1,"tid":1,"ts":70,"dur":6},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":71,"dur":3,"args":{"correlation":4}},
  {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":13,"ts":75,"dur":30,"args":{"device":0,"stream":13,"correlation":4}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":80,"dur":30},
  {"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":1,"ts":120,"dur":4},
  {"ph":"X","cat":"user_annotation","name":"checkpoint","pid":1,"tid":1,"ts":165,"dur":30},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":200,"dur":200},
  {"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":1,"tid":1,"ts":200,"dur":40},
  {"ph":"X","cat":"cpu_op","name":"aten::stack","pid":1,"tid":1,"ts":205,"dur":30},
  {"ph":"X","cat":"python_function","name":"nn.Module: Net_0","pid":1,"tid":1,"ts":241,"dur":120},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":252,"dur":10},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":253,"dur":4,"args":{"correlation":12}},
  {"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":258,"dur":40,"args":{"device":0,"stream":7,"correlation":12}},
  {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":263,"dur":6},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":264,"dur":3,"args":{"correlation":13}},
  {"ph":"X","cat":"kernel","name":"vectorized_elementwise_kernel","pid":0,"tid":7,"ts":299,"dur":5,"args":{"device":0,"stream":7,"correlation":13}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":280,"dur":30},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":400,"dur":150},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":452,"dur":10},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":453,"dur":4,"args":{"correlation":22}},
  {"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":458,"dur":40,"args":{"device":0,"stream":7,"correlation":22}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":470,"dur":30}
]})json";

void Check(bool ok, const char* what, std::string_view input) {
  if (ok) return;
  std::fprintf(stderr, "property failed: %s\ninput: %.*s\n", what, static_cast<int>(input.size()), input.data());
  std::abort();
}

bool FiniteNonNegative(double x) { return std::isfinite(x) && x >= 0; }

struct Fixture {
  std::unique_ptr<Trace> trace;
  CriticalPathResult path;
};

const Fixture& Shared() {
  static const Fixture f = [] {
    Fixture x;
    x.trace = fuzz::ImportScratchTrace("trace.json", kTrace);
    x.path = ComputeCriticalPath(*x.trace);  // keeps its graph (the replay's)
    return x;
  }();
  return f;
}

}  // namespace
}  // namespace aiprof

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  if (size > 4096) return 0;  // a scenario is a line; longer inputs only slow the search
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)CanonicalScenarioText(text);
  (void)JudgeOnMean(text, "");
  StatusOr<Scenario> sc = ParseScenario(text);
  if (!sc.ok()) return 0;
  StatusOr<Scenario> again = ParseScenario(sc->canonical);
  Check(again.ok(), "the canonical text parses", text);
  Check(again->canonical == sc->canonical, "the canonical text is its own canonical text", text);
  const Fixture& f = Shared();
  if (!ResolveScenarioDevices(*f.trace, "", &*sc).ok()) return 0;
  WhatIfResult r = PredictWhatIf(*f.trace, f.path, *sc);
  for (const StepPrediction& s : r.steps) {
    Check(s.measured_ns >= 0 && s.predicted_ns >= 0, "per-step figures are not negative", text);
  }
  for (bool mean : {false, true}) {
    const WhatIfFigure fig = FigureOf(r, mean);
    Check(FiniteNonNegative(fig.measured_ns) && FiniteNonNegative(fig.predicted_ns) &&
              FiniteNonNegative(fig.predicted_lo_ns) && FiniteNonNegative(fig.predicted_hi_ns),
          "the figures are finite and not negative", text);
    Check(fig.predicted_lo_ns <= fig.predicted_ns * (1 + 1e-9) + 1e-6 &&
              fig.predicted_ns <= fig.predicted_hi_ns * (1 + 1e-9) + 1e-6,
          "the interval holds the prediction", text);
  }
  return 0;
}
