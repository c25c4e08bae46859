#include "src/analysis/common/steps.h"

#include <charconv>
#include <cstdlib>
#include <map>

namespace aiprof {

namespace {

// The pattern's description in the metadata "steps.*" (a merged trace's
// parts have theirs under "<part>.steps.*"): the first part's, and the count.
void ReadPattern(const Trace& trace, StepList* out) {
  const std::string kFrom = "steps.from";
  for (const auto& [key, value] : trace.metadata) {
    if (value != kPeriodicPatternSource || !key.ends_with(kFrom)) continue;
    if (key.size() != kFrom.size() && key[key.size() - kFrom.size() - 1] != '.') continue;
    if (out->from_pattern) {
      ++out->pattern.parts;
      continue;
    }
    const std::string prefix = key.substr(0, key.size() - kFrom.size()) + "steps.";
    auto get = [&](const char* name) {
      auto it = trace.metadata.find(prefix + name);
      return it == trace.metadata.end() ? std::string() : it->second;
    };
    out->from_pattern = true;
    out->pattern.thread = get("thread");
    out->pattern.thread_name = get("thread_name");
    out->pattern.exact = get("exact") != "0";
    const std::string period = get("period_ops"), coverage = get("coverage");
    std::from_chars(period.data(), period.data() + period.size(), out->pattern.period_ops);
    out->pattern.coverage = std::strtod(coverage.c_str(), nullptr);
  }
}

}  // namespace

StepList FindSteps(const Trace& trace) {
  StepList out;
  const StepTable& st = trace.steps;
  if (st.size() > 0) {
    out.source = "timeline";
    ReadPattern(trace, &out);
    if (auto hook = trace.metadata.find("capture.steps_from"); hook != trace.metadata.end()) out.hook_source = hook->second;
    out.steps.reserve(st.size());
    for (uint32_t i = 0; i < st.size(); ++i) {
      StepSpan s;
      s.rank = st.rank[i];
      s.number = st.number[i];
      s.name = st.name[i];
      s.start_ns = st.ts_ns[i];
      s.dur_ns = st.dur_ns[i];
      s.row = i;
      out.steps.push_back(s);
    }
    return out;
  }
  const StepBreakdownTable& b = trace.step_breakdown;
  struct Values {
    int64_t computing = -1, comm = -1, free = -1, stage = -1, iteration = -1;
  };
  std::map<std::pair<int32_t, int64_t>, Values> by_step;
  std::string source;
  for (size_t i = 0; i < b.size(); ++i) {
    std::string_view key = trace.Str(b.key[i]);
    Values& v = by_step[{b.rank[i], b.step[i]}];
    if (key == "Computing") v.computing = b.value_ns[i];
    if (key == "Communication(Not Overlapped)") v.comm = b.value_ns[i];
    if (key == "Free") v.free = b.value_ns[i];
    if (key == "Stage") v.stage = b.value_ns[i];
    if (key == "Iteration Time(us)") v.iteration = b.value_ns[i];
    if (source.empty()) source = std::string(trace.Str(b.source[i]));
  }
  for (const auto& [k, v] : by_step) {
    int64_t dur = v.computing >= 0 && v.comm >= 0 && v.free >= 0 ? v.computing + v.comm + v.free
                  : v.stage >= 0                                  ? v.stage
                                                                  : v.iteration;
    if (dur < 0) continue;
    StepSpan s;
    s.rank = k.first;
    s.number = k.second;
    s.dur_ns = dur;
    s.computing_ns = v.computing;
    s.communication_not_overlapped_ns = v.comm;
    s.free_ns = v.free;
    out.steps.push_back(s);
  }
  if (!out.steps.empty()) out.source = source;
  return out;
}

}  // namespace aiprof
