// libFuzzer harness for the whole analysis session: arbitrary bytes imported
// as a trace file (the Chrome JSON importer and its format sniffing, as
// `aiprof` imports a file), then every analysis, the diagnosis and the
// suggestions with their what-if replays — what `aiprof report` computes.
// The importer fuzzers stop at the trace; this one reaches the analyses a
// hostile trace drives: step finding, the critical path, attribution, the
// fusion, layout, dtype round-trip and host-region analyses, the op-argument
// readers (Kineto's lists and torch_npu's text), the rules.
//
// Properties checked (a failure aborts, and libFuzzer keeps the input): the
// session answers (a trace that imports is analysable, whatever it holds);
// every quantified impact is finite and not negative, its share too; every
// suggestion's expected gain is finite with its low end at most its high end.
// Seeds: small Kineto, legacy and hand-made traces (scripts/fuzz.sh).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/diagnosis/suggest.h"
#include "src/importers/common/importer_registry.h"
#include "src/session/session.h"
#include "test/fuzz/fuzz_util.h"

namespace aiprof {
namespace {

void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "property failed: %s\n", what);
  std::abort();
}

bool FiniteNonNegative(double x) { return std::isfinite(x) && x >= 0; }

}  // namespace
}  // namespace aiprof

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  if (size > 64 * 1024) return 0;                        // larger inputs only slow the search
  const std::filesystem::path dir = fuzz::ScratchDir();  // emptied at each call
  const std::filesystem::path path = dir / "input.json";
  fuzz::WriteFile(path, std::string_view(reinterpret_cast<const char*>(data), size));
  StatusOr<std::unique_ptr<Trace>> trace = ImportTrace(path.string());
  if (!trace.ok()) return 0;  // rejected with an error: the importer fuzzers' business
  SessionOptions options;
  options.attach_history = false;
  options.db = (dir / "none.db").string();
  std::unique_ptr<AnalysisSession> session = AnalysisSession::ForTrace(**trace, options);
  StatusOr<const Diagnosis*> d = session->diagnosis();
  Check(d.ok(), "an imported trace gets a diagnosis");
  for (const Finding& f : (*d)->findings) {
    if (!f.impact.quantified) continue;
    Check(FiniteNonNegative(f.impact.time_ns) && FiniteNonNegative(f.impact.share), "impacts are finite, >= 0");
  }
  StatusOr<const SuggestResult*> s = session->suggestions();
  Check(s.ok(), "an imported trace gets suggestions");
  for (const SuggestionOutcome& o : (*s)->kept) {
    Check(std::isfinite(o.gain_min) && std::isfinite(o.gain_max) && o.gain_min <= o.gain_max + 1e-9,
          "expected gains are finite, low <= high");
  }
  return 0;
}
