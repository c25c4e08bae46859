#include "src/analysis/communication/link_bandwidth.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <tuple>

#include "src/analysis/communication/rank_outlier.h"
#include "src/base/quantile.h"

namespace aiprof {
namespace {

struct LinkTotals {
  std::string transport;
  double megabytes = 0, milliseconds = 0;
};

// op is "<step>/<op@group>/<src-dst>"; splits off the link and the op.
bool SplitMatrixOp(std::string_view op, std::string_view* collective, std::string_view* link) {
  const size_t last = op.rfind('/');
  if (last == std::string_view::npos || last == 0) return false;
  *link = op.substr(last + 1);
  const size_t first = op.find('/');
  *collective = op.substr(first + 1, last - first - 1);
  return !link->empty();
}

// (rank, link) → totals from the matrix rows; only "-total@" rows of a rank
// that has any.
std::map<std::pair<int32_t, std::string>, LinkTotals> ReadMatrix(const Trace& trace) {
  const OpMetricTable& m = trace.op_metrics;
  std::map<int32_t, bool> rank_has_total;
  std::vector<size_t> rows;
  for (size_t i = 0; i < m.size(); ++i) {
    if (trace.Str(m.source[i]) != "communication_matrix.json") continue;
    rows.push_back(i);
    if (trace.Str(m.op[i]).find("-total@") != std::string_view::npos) rank_has_total[m.rank[i]] = true;
  }
  std::map<std::pair<int32_t, std::string>, LinkTotals> out;
  for (size_t i : rows) {
    std::string_view collective, link;
    if (!SplitMatrixOp(trace.Str(m.op[i]), &collective, &link)) continue;
    if (rank_has_total[m.rank[i]] && collective.find("-total@") == std::string_view::npos) continue;
    LinkTotals& t = out[{m.rank[i], std::string(link)}];
    std::string_view key = trace.Str(m.key[i]);
    if (key == "Transport Type") {
      t.transport = std::string(trace.Str(m.text[i]));
    } else if (key == "Transit Size(MB)" && !std::isnan(m.value[i])) {
      t.megabytes += m.value[i];
    } else if (key == "Transit Time(ms)" && !std::isnan(m.value[i])) {
      t.milliseconds += m.value[i];
    }
  }
  return out;
}

bool IsLoopback(const LinkBandwidth& l) {
  const size_t dash = l.link.find('-');
  return l.transport == "LOCAL" || (dash != std::string::npos && l.link.substr(0, dash) == l.link.substr(dash + 1));
}

// Marks judged links and compares each with its transport's median.
void JudgeLinks(std::vector<LinkBandwidth>* links) {
  std::map<std::string, std::vector<double>> by_transport;
  for (LinkBandwidth& l : *links) {
    l.judged = !IsLoopback(l) && l.bytes >= kMinJudgedLinkBytes && l.time_ns > 0;
    if (l.judged) by_transport[l.transport].push_back(l.bandwidth_bytes_per_second);
  }
  std::map<std::string, double> medians;
  for (auto& [transport, bw] : by_transport) {
    if (bw.size() < kMinLinksToCompare) continue;
    medians[transport] = Median(std::move(bw));
  }
  for (LinkBandwidth& l : *links) {
    auto it = medians.find(l.transport);
    if (!l.judged || it == medians.end()) {
      l.judged = false;
      continue;
    }
    l.transport_median_bytes_per_second = it->second;
    l.slow = l.bandwidth_bytes_per_second < kSlowLinkBandwidthShare * it->second;
  }
}

}  // namespace

std::vector<LinkBandwidth> ComputeLinkBandwidths(const Trace& trace) {
  std::vector<LinkBandwidth> links;
  for (const auto& [key, t] : ReadMatrix(trace)) {
    LinkBandwidth l;
    std::tie(l.rank, l.link) = key;
    l.transport = t.transport;
    l.bytes = t.megabytes * 1e6;
    l.time_ns = t.milliseconds * 1e6;
    l.bandwidth_bytes_per_second = l.time_ns > 0 ? l.bytes / (l.time_ns * 1e-9) : 0;
    links.push_back(std::move(l));
  }
  JudgeAndSortLinks(&links);
  return links;
}

void JudgeAndSortLinks(std::vector<LinkBandwidth>* links) {
  JudgeLinks(links);
  std::stable_sort(links->begin(), links->end(), [](const LinkBandwidth& a, const LinkBandwidth& b) {
    return std::tie(b.judged, a.bandwidth_bytes_per_second) < std::tie(a.judged, b.bandwidth_bytes_per_second);
  });
}

}  // namespace aiprof
