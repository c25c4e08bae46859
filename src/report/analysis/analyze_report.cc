#include "src/report/analysis/analyze_report.h"

#include <cmath>
#include <cstdio>

#include "src/render/escape.h"

namespace aiprof {
namespace {

std::string Number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Pretty(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string AnalysisToText(const AnalysisReport& r) {
  std::string out;
  for (const AnalysisSection& s : r.sections) {
    out += "== " + s.name + "\n";
    for (const std::string& line : s.lines) out += "  " + TerminalSafe(line) + "\n";
  }
  out += "== metrics\n";
  for (const auto& [name, v] : r.metrics.values()) {
    const MetricInfo* info = FindMetricInfo(name);
    out += "  " + name + " = " + Pretty(v.value) + " " + (info ? MetricUnitName(info->unit) : "") +
           (v.measured ? "" : " (estimated)") + "\n";
  }
  for (const auto& [name, why] : r.metrics.unavailable()) out += "  " + name + " unavailable: " + TerminalSafe(why) + "\n";
  bool header = false;
  // Every topic the analyses published (a fixed list here had drifted and
  // dropped eight of them).
  for (const auto& [topic, lines] : r.metrics.evidence()) {
    for (const std::string& line : lines) {
      if (!header) out += "== evidence\n", header = true;
      out += "  [" + TerminalSafe(topic) + "] " + TerminalSafe(line) + "\n";
    }
  }
  return out;
}

std::string AnalysisToJson(const AnalysisReport& r) {
  std::string out = "{\"metrics\":{";
  bool first = true;
  for (const auto& [name, v] : r.metrics.values()) {
    const MetricInfo* info = FindMetricInfo(name);
    out += std::string(first ? "" : ",") + JsonString(name) + ":{\"value\":" + Number(v.value) +
           ",\"unit\":" + JsonString(info ? MetricUnitName(info->unit) : "") + ",\"source\":" + JsonString(v.source) +
           ",\"measured\":" + (v.measured ? "true" : "false") + "}";
    first = false;
  }
  out += "},\"unavailable\":{";
  first = true;
  for (const auto& [name, why] : r.metrics.unavailable()) {
    out += std::string(first ? "" : ",") + JsonString(name) + ":" + JsonString(why);
    first = false;
  }
  out += "},\"evidence\":{";
  first = true;
  for (const auto& [topic, lines] : r.metrics.evidence()) {
    if (lines.empty()) continue;
    out += std::string(first ? "" : ",") + JsonString(topic) + ":[";
    for (size_t i = 0; i < lines.size(); ++i) out += (i ? "," : "") + JsonString(lines[i]);
    out += "]";
    first = false;
  }
  out += "},\"sections\":{";
  for (size_t s = 0; s < r.sections.size(); ++s) {
    out += (s ? "," : "") + JsonString(r.sections[s].name) + ":[";
    for (size_t i = 0; i < r.sections[s].lines.size(); ++i) out += (i ? "," : "") + JsonString(r.sections[s].lines[i]);
    out += "]";
  }
  out += "}}\n";
  return out;
}

}  // namespace aiprof
