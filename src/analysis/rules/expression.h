// The rule expression language.
//
//   expr    := or
//   or      := and ("or" and)*
//   and     := not ("and" not)*
//   not     := "not" not | compare
//   compare := operand ("<" | "<=" | ">" | ">=" | "==" | "!=") operand | "(" expr ")"
//   operand := metric_name | number [unit] | number "*" "baseline" | "baseline" ["*" number]
//   unit    := "%" | "ns" | "us" | "ms" | "s" | "B" | "KB" | "MB" | "GB" | "KiB" | "MiB" | "GiB"
//            | "GB/s" | "TB/s" | "GFLOPS" | "TFLOPS" | "/s" | "/min"
//
// `1.2 * baseline` compares the metric with 1.2 times its stored baseline:
// the value of the metric "baseline.<metric>" in what is evaluated (aiprof
// monitor supplies it from `--service NAME --db PATH`; rules never have one,
// so there the comparison is Unknown).
//
// Metric names must be in the catalogue, and a unit must fit the metric's
// (% with ratios, time units with ns metrics, ...): both are checked when the
// rule loads. Evaluation is three-valued: a comparison on a metric the trace
// cannot supply is Unknown, and "and"/"or" propagate it (false and unknown is
// false; true or unknown is true).
#ifndef AIPROF_SRC_ANALYSIS_RULES_EXPRESSION_H_
#define AIPROF_SRC_ANALYSIS_RULES_EXPRESSION_H_

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/metrics/metric_set.h"
#include "src/base/status.h"

namespace aiprof {

enum class Truth { kFalse, kTrue, kUnknown };

// One comparison that decided a result, for confidence and evidence.
struct ComparisonOutcome {
  std::string metric;
  std::string op;
  double value = 0;      // the metric's value
  double threshold = 0;  // the number it was compared with, in the metric's unit
  bool holds = false;
  bool measured = true;
  // How far past the threshold, relative to it (0.5 = 50% beyond); 0 if not holding.
  double margin = 0;
};

struct EvalResult {
  Truth truth = Truth::kUnknown;
  std::vector<ComparisonOutcome> comparisons;  // those evaluated
  std::set<std::string> missing_metrics;       // those the trace lacks
};

class Expression {
 public:
  struct Node;
  Expression();
  ~Expression();
  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;

  // Where metric names are looked up when parsing (default: the analyses'
  // catalogue, FindMetricInfo); aiprof monitor passes its own.
  using Catalogue = const MetricInfo* (*)(std::string_view name);
  // Metric values by name when evaluating; nullptr when absent.
  using Lookup = std::function<const MetricValue*(std::string_view name)>;

  // Parses `text`; errors say what and at which column.
  static StatusOr<Expression> Parse(std::string_view text, Catalogue catalogue = nullptr);
  EvalResult Evaluate(const MetricSet& metrics) const;
  EvalResult Evaluate(const Lookup& lookup) const;
  // Whether some comparison is against `baseline`.
  bool UsesBaseline() const;
  // Metric names the expression reads.
  std::set<std::string> Metrics() const;
  const std::string& text() const { return text_; }

 private:
  std::unique_ptr<Node> root_;
  std::string text_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_RULES_EXPRESSION_H_
