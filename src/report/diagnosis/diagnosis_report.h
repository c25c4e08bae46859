// A diagnosis (and, for `suggest`, its filtered suggestions) as one
// document: per finding its bottleneck, confidence and impact, the rule's
// indicators as a typed table, the root causes with their evidence and the
// kept fixes; then the excluded suggestions and the rules not evaluated.
// The shared renderers write it as text, Markdown and HTML; JSON keeps its
// published schema (aiprof.diagnosis/1, docs/diagnosis-schema.md) as the
// document's machine form. Every string from the trace or the rule files is
// plain text in the document, escaped by the renderers.
#ifndef AIPROF_SRC_REPORT_DIAGNOSIS_DIAGNOSIS_REPORT_H_
#define AIPROF_SRC_REPORT_DIAGNOSIS_DIAGNOSIS_REPORT_H_

#include <string>
#include <string_view>

#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/diagnosis/suggest.h"
#include "src/render/document.h"

namespace aiprof {

// Evidence lines shown per root cause in the text forms; past it, how many
// were left out (the machine form lists every line).
inline constexpr size_t kEvidenceLinesShown = 12;

struct DiagnosisReport {
  std::string source;  // input path
  const MetricSet* metrics = nullptr;
  const Diagnosis* diagnosis = nullptr;
  const SuggestResult* suggestions = nullptr;  // null for `diagnose`
  const SuggestOptions* options = nullptr;     // null for `diagnose`
};

// A suggestion's expected gain in one line, with its base and origin:
// "9.9% to 17.9% of the time per step (x1.11 to x1.22; prior: ...)".
std::string GainText(const SuggestionOutcome& o);

// The same for a headline card beside a Step time card of another measure:
// a simulated gain names its replayed step (start to the end of its last
// device work, or the device period) and statistic before its figures
// ("simulated 'overlap-data-loading 4' over 6 steps, each from its start to
// the end of its last device work: median 189.08 ms -> 130.66 ms"), and
// leaves the interval and the reconciliation with the finding's bound to the
// diagnosis section. Other gains: GainText.
std::string BriefGainText(const SuggestionOutcome& o);

// A finding's impact (ImpactText) on a page that states its time base once
// (the report's Step time card, the diagnosis's "Impacts" line): without the
// base's description when it is `stated_basis_text`, and with `brief` also
// without the replay's step definition ("('remove-comm')" for
// "('remove-comm'; step period, ...: 18.769 ms -> 16.394 ms)"), for a
// headline card; the diagnosis section gives both in full.
std::string ImpactTextOnStatedBase(const Finding& f, std::string_view stated_basis_text, bool brief = false);

// A replayed scenario (a suggestion's simulation, a finding's replayed
// removal) in the published JSON form: scenario, time base, statistic,
// steps, measured and predicted step, interval, history correction.
Tree SimulatedGainTree(const SimulatedGain& g);

// A prior's bound (SuggestionOutcome::prior_cap), in the published JSON form:
// {"max": fraction, "scenario": "remove-comm", "applied": true when it
// lowered the prior}; null when the fix's finding has no replayed removal.
// Both documents' expected_gain carry it as `cap`.
Tree PriorCapTree(const SuggestionOutcome& o);

// The published JSON form (aiprof.diagnosis/1) as a tree.
Tree DiagnosisTree(const DiagnosisReport& r);
// The whole result as a document; its machine form is DiagnosisTree.
render::Document DiagnosisToDocument(const DiagnosisReport& r);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_DIAGNOSIS_DIAGNOSIS_REPORT_H_
