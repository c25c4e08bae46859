// A diagnosis rule as loaded from YAML (docs/rules.md describes the format).
#ifndef AIPROF_SRC_ANALYSIS_RULES_RULE_H_
#define AIPROF_SRC_ANALYSIS_RULES_RULE_H_

#include <optional>
#include <string>
#include <vector>

#include "src/analysis/rules/expression.h"

namespace aiprof {

enum class Confidence { kLow = 0, kMedium = 1, kHigh = 2 };
const char* ConfidenceName(Confidence c);

struct RootCause {
  std::string id;
  std::string text;
  std::string evidence_topic;       // MetricSet evidence shown with it
  std::optional<Expression> when;   // if set, the cause applies only when true
  // applies_if_computed: METRIC — the cause is left out on a trace for which
  // METRIC was never computed (as Rule::applies_if_computed).
  std::string applies_if_computed;
};

// What a suggestion may cost. Fractions: 0.01 = 1%.
struct SuggestionRisk {
  double precision_loss = 0;   // expected accuracy/precision loss
  double memory_increase = 0;  // relative increase of peak memory
  std::string effort = "low";  // low | medium | high
  std::string note;            // free text shown to the user
};

// One concrete change a suggestion makes, for tools that apply it (a model
// converter such as ATC, a launcher, a config generator): the tool or
// library, what kind of knob, which knob, and the value to set.
struct SuggestionChange {
  std::string tool;     // pytorch | atc | torch_npu | env | application | os | cluster ...
  std::string kind;     // api | flag | env | setting | code | command | procedure
  std::string setting;  // e.g. "--input_format", "torch.utils.data.DataLoader(num_workers)"
  std::string value;    // e.g. "NHWC", "4"
};

struct Suggestion {
  std::string id;
  std::string title;
  std::string platform;             // generic | pytorch | cuda | rocm | gpu | cpu | ascend, or "pytorch, gpu" (all)
  std::string action;               // what to do, concretely
  double efficacy_min = 0;          // fraction of the attributable time removed
  double efficacy_max = 0;
  std::vector<std::string> targets;  // latency | throughput | memory
  SuggestionRisk risk;
  std::vector<SuggestionChange> changes;  // machine-readable form of `action`
  // What the fix does to the trace, as a what-if scenario (docs/whatif.md),
  // e.g. "remove-idle data_loading": its expected gain is then simulated on
  // the trace's dependency graph. Empty: the fix cannot be simulated from a
  // trace (a new library, a precision change) and the efficacy is a prior.
  std::string scenario;
  // when: EXPR — the suggestion applies only where EXPR is not false (it is
  // listed as excluded, with the comparison, where it is false; kept where
  // its metrics are unknown), e.g. "malloc_glibc == 1" for a glibc tunable.
  std::optional<Expression> when;
};

struct Rule {
  std::string id;
  std::string bottleneck;  // bottleneck type, e.g. layout_conversion
  std::string title;
  std::string description;
  Expression when;                       // the indicators
  std::optional<Expression> high_when;   // confidence high if true
  std::optional<Expression> medium_when; // confidence medium if true
  std::string impact_metric;             // time saved (ns per step / per trace), or ratio of memory; "" unquantified
  bool impact_on_memory = false;         // impact_of: memory — a share of device memory, not time
  bool impact_on_trace = false;          // impact_of: trace — time of the whole trace span (start-up)
  bool first = false;                    // first: true — ranked before every other finding when it fires
  // removal: SCENARIO — the cause removed, as a what-if scenario
  // (docs/whatif.md), e.g. "remove-comm"; replayed beside the impact's
  // Amdahl bound (Impact::replayed). Empty: no replay.
  std::string removal;
  // applies_if_computed: METRIC — the rule is left out (neither evaluated
  // nor listed as not evaluated) on a trace for which METRIC was never
  // computed (no value, no unavailable reason): data only some recorders
  // give (page faults: aiprof trace), absent from every other trace.
  std::string applies_if_computed;
  std::vector<RootCause> root_causes;
  std::vector<Suggestion> suggestions;
  std::string source;                    // "file:line" it came from
};

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_RULES_RULE_H_
