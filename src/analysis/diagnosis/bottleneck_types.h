// The bottleneck types the shipped rules report, and what each implies for
// the diagnosis, the prediction check and the timeline: one table
// (bottleneck_types.cc), so a new type is one line there. A rule may name a
// type of its own (--rules FILE): it then has none of these traits.
//
//   if (const BottleneckType* t = FindBottleneckType(f.rule->bottleneck); t && t->exclusive_impact) ...
#ifndef AIPROF_SRC_ANALYSIS_DIAGNOSIS_BOTTLENECK_TYPES_H_
#define AIPROF_SRC_ANALYSIS_DIAGNOSIS_BOTTLENECK_TYPES_H_

#include <span>
#include <string_view>

namespace aiprof {

struct BottleneckType {
  std::string_view name;
  // Its impact is a disjoint part of the step by construction (idle by
  // cause, exposed copies, exposed communication, conversion kernels): the
  // impacts of these types add up; others overlap them (docs/rules.md).
  bool exclusive_impact = false;
  // The finding says what the time is rather than a cause to remove (the
  // compute finding): ordered after the removable causes, no Amdahl bound.
  bool descriptive = false;
  // About what the trace lets the analyses see, not the program (op
  // coverage): a caveat, ordered after the findings about the program.
  bool caveat = false;
  // About the spread of step or op times: any change of the step moves it,
  // so its going away names no fix the after run applied.
  bool spread = false;
  // The idle-gap cause (GapCauseName, src/analysis/gaps/idle_gaps.h) whose
  // largest gaps the timeline marks for a finding of this type; "" none.
  std::string_view gap_cause = "";
};

// Every known type, in docs/rules.md's order.
std::span<const BottleneckType> BottleneckTypes();
// The type named `name`; nullptr for a type no shipped rule uses.
const BottleneckType* FindBottleneckType(std::string_view name);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_DIAGNOSIS_BOTTLENECK_TYPES_H_
