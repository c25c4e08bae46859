// AnalysisResults: the structured result of every analysis over one trace,
// each computed at most once, on first request, and kept. `analyze`, the
// diagnosis, the report, its embedded views and the Python package all read
// the same objects (src/session/ owns one per trace).
//
// A result is named by a ResultSpec defined in its analysis's folder (e.g.
// kLaunches in src/analysis/launches/launches_analysis.h): its phase name
// and the function that computes it from the trace, the options and other
// results. There is no central list of results: the slot of a spec is
// keyed by the spec's address.
//
//   const LaunchStats& s = results.Get(kLaunches);
#ifndef AIPROF_SRC_ANALYSIS_RESULTS_H_
#define AIPROF_SRC_ANALYSIS_RESULTS_H_

#include <memory>
#include <string>
#include <vector>

namespace aiprof {

struct Trace;
class AnalysisResults;

struct AnalyzeOptions {
  // Analyses to run, by name (AnalysisNames()); empty runs all of them.
  std::vector<std::string> only;
  // Roofline: device whose peaks to use (a name in the devices file, e.g.
  // "A100-SXM4-80GB", "cpu-local"); empty = from trace metadata if it names a
  // known device, otherwise roofline utilization metrics are unavailable.
  std::string device;
  // Roofline: devices file; empty = AIPROF_DEVICES env var, then data/devices.yaml.
  std::string devices_file;
  // Leading warm-up steps left out of impacts; -1 detects them
  // (src/analysis/window/analysis_window.h).
  int warmup_steps = -1;
  // Prefixed to the --timing phases of this trace's analyses, rules and
  // diagnosis ("before." for the before run of report --before), so each
  // run's phases read once.
  std::string phase_prefix;
  // Gaps: also keep every gap (GapsOptions::keep_all_gaps), for a front end
  // that draws them (the timeline view, the report that embeds it).
  bool keep_all_gaps = false;
};

// One result of an analysis: computed by `compute` (which may Get other
// results) at most once per AnalysisResults, and logged as the phase
// "<phase_prefix>analysis.<phase>" (--timing). Define one object per result,
// in the result's own folder, and declare it extern in its header.
template <typename R>
struct ResultSpec {
  const char* phase;
  R (*compute)(AnalysisResults&);
  // Set where, under some options, this result is another spec's (every
  // gap kept is the gaps themselves when they keep every gap): returns that
  // spec, or null to compute this one.
  const ResultSpec<R>* (*same_as)(const AnalysisResults&) = nullptr;
};

class AnalysisResults {
 public:
  AnalysisResults(const Trace& trace, AnalyzeOptions options);
  ~AnalysisResults();
  AnalysisResults(const AnalysisResults&) = delete;
  AnalysisResults& operator=(const AnalysisResults&) = delete;

  const Trace& trace() const { return trace_; }
  const AnalyzeOptions& options() const { return options_; }

  // The result `spec` names, computed by the first caller; safe to call
  // from several threads (std::call_once: a second caller waits for the
  // first). The reference stays valid as long as this object.
  template <typename R>
  const R& Get(const ResultSpec<R>& spec) {
    if (spec.same_as != nullptr) {
      if (const ResultSpec<R>* other = spec.same_as(*this); other != nullptr && other != &spec) return Get(*other);
    }
    return *static_cast<const R*>(Find(&spec, spec.phase, &Make<R>));
  }

 private:
  // A computed result with its type erased; the deleter knows the type.
  using Value = std::unique_ptr<void, void (*)(void*)>;
  using Maker = Value (*)(AnalysisResults&, const void* spec);
  template <typename R>
  static Value Make(AnalysisResults& in, const void* spec) {
    return Value(new R(static_cast<const ResultSpec<R>*>(spec)->compute(in)),
                 [](void* p) { delete static_cast<R*>(p); });
  }
  // The value of the slot keyed by `spec`, made by `make` on first request.
  const void* Find(const void* spec, const char* phase, Maker make);

  struct Slots;
  const Trace& trace_;
  AnalyzeOptions options_;
  std::unique_ptr<Slots> slots_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_RESULTS_H_
