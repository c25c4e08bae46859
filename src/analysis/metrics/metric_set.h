// MetricSet: the measurements analyses publish and diagnosis rules read.
//
// Every metric an analysis can publish is declared once in the catalogue
// (metric_catalogue.cc) with its unit and meaning; the rule loader rejects
// names not in it. A metric the trace cannot support is recorded as
// unavailable with the reason — never as zero.
#ifndef AIPROF_SRC_ANALYSIS_METRICS_METRIC_SET_H_
#define AIPROF_SRC_ANALYSIS_METRICS_METRIC_SET_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiprof {

// Units a metric can carry. Ratios are stored as fractions (0.38 = 38%).
enum class MetricUnit { kRatio, kCount, kNanoseconds, kBytes, kBytesPerSecond, kFlopsPerSecond, kNumber, kPerSecond };
const char* MetricUnitName(MetricUnit unit);

struct MetricInfo {
  std::string_view name;
  MetricUnit unit;
  std::string_view description;
};

// All metrics analyses may publish, sorted by name.
const std::vector<MetricInfo>& MetricCatalogue();
const MetricInfo* FindMetricInfo(std::string_view name);

// A large consumer of time inside the analysis window (for "unexplained
// time"): what it is, its name, and its time per the impact base.
struct TimeConsumer {
  std::string kind;  // "device op", "host op", "thread", "idle"
  std::string name;
  double ns = 0;
};

struct MetricValue {
  double value = 0;
  bool measured = true;  // false: estimated (e.g. FLOPs from shapes, not counters)
  std::string source;    // the analysis that produced it
};

class MetricSet {
 public:
  // Records a value; `name` must be in the catalogue (CHECKed: a bug otherwise).
  void Set(std::string_view name, double value, std::string_view source, bool measured = true);
  // Records that the trace cannot support `name`, and why.
  void SetUnavailable(std::string_view name, std::string_view reason);
  // The value, or nullptr when absent or unavailable.
  const MetricValue* Get(std::string_view name) const;
  // Why `name` is unavailable; nullopt if it has a value or was never computed.
  std::optional<std::string> UnavailableReason(std::string_view name) const;
  // Evidence lines (already formatted, plain text) under a topic such as
  // "layout_conversion"; reports escape them.
  void AddEvidence(std::string_view topic, std::string line);
  const std::vector<std::string>& Evidence(std::string_view topic) const;

  // Applies everything `other` recorded, as if its calls had been made on
  // this set after this set's own (analyses run apart, merged in order).
  void MergeFrom(MetricSet&& other);

  void AddConsumer(TimeConsumer c) { consumers_.push_back(std::move(c)); }
  const std::vector<TimeConsumer>& consumers() const { return consumers_; }

  const std::map<std::string, MetricValue, std::less<>>& values() const { return values_; }
  const std::map<std::string, std::string, std::less<>>& unavailable() const { return unavailable_; }
  // Every topic with evidence, by topic name.
  const std::map<std::string, std::vector<std::string>, std::less<>>& evidence() const { return evidence_; }

 private:
  std::map<std::string, MetricValue, std::less<>> values_;
  std::map<std::string, std::string, std::less<>> unavailable_;
  std::map<std::string, std::vector<std::string>, std::less<>> evidence_;
  std::vector<TimeConsumer> consumers_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_METRICS_METRIC_SET_H_
