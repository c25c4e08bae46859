// Renders validation results (JSON schema in docs/validation.md), the
// one-line alert, validation history and knowledge cards. Everything taken
// from inputs (file names, op names, card text) is escaped for the format.
#ifndef AIPROF_SRC_REPORT_VALIDATION_VALIDATION_REPORT_H_
#define AIPROF_SRC_REPORT_VALIDATION_VALIDATION_REPORT_H_

#include <string>
#include <vector>

#include "src/analysis/validation/baseline_store.h"
#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/knowledge_card.h"
#include "src/render/document.h"

namespace aiprof {

// Ops listed in the per-op table of Markdown and HTML reports.
inline constexpr size_t kReportOps = 15;

std::string ValidationToJson(const ValidationResult& r);
// The result as a document (inputs, metrics, diagnosis, per-op shift), its
// machine form the JSON above; Markdown, text and HTML render it.
render::Document ValidationToDocument(const ValidationResult& r);
std::string ValidationToMarkdown(const ValidationResult& r);
// For terminals (validate without -o): aligned plain text, no Markdown escapes.
std::string ValidationToText(const ValidationResult& r);
std::string ValidationToHtml(const ValidationResult& r);
// One line (no newline) naming the overall verdict and the deciding metric,
// e.g. "aiprof: REGRESSED: latency +12.3% (mean; p = 0.0012; 95% CI +8.1% .. +15.0%)".
std::string ValidationHeadline(const ValidationResult& r);
// The verdict as a headline card: "Improved: latency -28.40%" with the test,
// interval and sample sizes as its detail, and the prediction check when one
// was made. The report leads its headline with it when given a before run.
render::KeyValue ValidationCard(const ValidationResult& r);

// Stored validations as a document (a table; its machine form HistoryToJson).
render::Document HistoryToDocument(const std::vector<ValidationRecord>& records);
std::string HistoryToText(const std::vector<ValidationRecord>& records);
std::string HistoryToJson(const std::vector<ValidationRecord>& records);

// The card as a document: scene, core bottleneck, effective fix, measured
// gain with its interval, verdict, evidence; and as Markdown.
render::Document CardToDocument(const KnowledgeCard& card);
std::string CardToMarkdown(const KnowledgeCard& card);

// "12.35 ms", "830 us", "1.2 s"; values of other units with 4 significant digits. Visible for testing.
std::string FormatValue(double v, const std::string& unit);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_VALIDATION_VALIDATION_REPORT_H_
