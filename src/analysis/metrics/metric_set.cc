#include "src/analysis/metrics/metric_set.h"

#include <algorithm>

#include "src/base/check.h"

namespace aiprof {

const char* MetricUnitName(MetricUnit unit) {
  switch (unit) {
    case MetricUnit::kRatio: return "ratio";
    case MetricUnit::kCount: return "count";
    case MetricUnit::kNanoseconds: return "ns";
    case MetricUnit::kBytes: return "bytes";
    case MetricUnit::kBytesPerSecond: return "bytes/s";
    case MetricUnit::kFlopsPerSecond: return "flop/s";
    case MetricUnit::kNumber: return "number";
    case MetricUnit::kPerSecond: return "1/s";
  }
  return "number";
}

const MetricInfo* FindMetricInfo(std::string_view name) {
  const auto& all = MetricCatalogue();
  auto it = std::lower_bound(all.begin(), all.end(), name,
                             [](const MetricInfo& m, std::string_view n) { return m.name < n; });
  return it != all.end() && it->name == name ? &*it : nullptr;
}

void MetricSet::Set(std::string_view name, double value, std::string_view source, bool measured) {
  AIPROF_CHECK(FindMetricInfo(name) != nullptr);
  values_[std::string(name)] = MetricValue{value, measured, std::string(source)};
  auto it = unavailable_.find(name);
  if (it != unavailable_.end()) unavailable_.erase(it);
}

void MetricSet::SetUnavailable(std::string_view name, std::string_view reason) {
  AIPROF_CHECK(FindMetricInfo(name) != nullptr);
  if (values_.find(name) != values_.end()) return;
  unavailable_[std::string(name)] = std::string(reason);
}

const MetricValue* MetricSet::Get(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

std::optional<std::string> MetricSet::UnavailableReason(std::string_view name) const {
  auto it = unavailable_.find(name);
  if (it == unavailable_.end()) return std::nullopt;
  return it->second;
}

void MetricSet::MergeFrom(MetricSet&& other) {
  for (auto& [name, v] : other.values_) {
    values_[name] = std::move(v);
    auto it = unavailable_.find(name);
    if (it != unavailable_.end()) unavailable_.erase(it);
  }
  for (auto& [name, reason] : other.unavailable_) {
    if (values_.find(name) == values_.end()) unavailable_[name] = std::move(reason);
  }
  for (auto& [topic, lines] : other.evidence_) {
    std::vector<std::string>& mine = evidence_[topic];
    for (std::string& l : lines) mine.push_back(std::move(l));
  }
  for (TimeConsumer& c : other.consumers_) consumers_.push_back(std::move(c));
}

void MetricSet::AddEvidence(std::string_view topic, std::string line) {
  evidence_[std::string(topic)].push_back(std::move(line));
}

const std::vector<std::string>& MetricSet::Evidence(std::string_view topic) const {
  static const std::vector<std::string> kNone;
  auto it = evidence_.find(topic);
  return it == evidence_.end() ? kNone : it->second;
}

}  // namespace aiprof
