#include "src/analysis/memory/memory_series.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace aiprof {
namespace {

std::optional<double> ArgNumberAt(const Trace& t, uint64_t begin, uint16_t count, StringId key) {
  for (uint64_t i = begin; i < begin + count; ++i) {
    const Arg& a = t.args[i];
    if (a.key != key) continue;
    if (a.type == ArgType::kInt) return static_cast<double>(a.i);
    if (a.type == ArgType::kUint) return static_cast<double>(a.u);
    if (a.type == ArgType::kDouble) return a.d;
    return std::nullopt;
  }
  return std::nullopt;
}

const char* DeviceTypeName(int64_t type) {
  switch (type) {
    case 0: return "CPU";
    case 1: return "CUDA";
    case 20: return "NPU";
    default: return "device";
  }
}

void Downsample(MemorySeries* s, size_t max_points) {
  if (s->deltas) {
    // Running sum in time order (instants are ordered by track, not time).
    std::vector<size_t> order(s->ts_ns.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s->ts_ns[a] < s->ts_ns[b]; });
    std::vector<int64_t> ts;
    std::vector<double> v;
    double sum = 0;
    for (size_t i : order) {
      sum += s->bytes[i];
      ts.push_back(s->ts_ns[i]);
      v.push_back(sum);
    }
    s->ts_ns = std::move(ts);
    s->bytes = std::move(v);
    s->deltas = false;
  }
  std::vector<size_t> order(s->ts_ns.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s->ts_ns[a] < s->ts_ns[b]; });
  std::vector<int64_t> ts;
  std::vector<double> v;
  for (size_t i : order) {
    ts.push_back(s->ts_ns[i]);
    v.push_back(s->bytes[i]);
    s->peak_bytes = std::max(s->peak_bytes, s->bytes[i]);
  }
  if (max_points == 0 || ts.size() <= max_points) {
    s->ts_ns = std::move(ts);
    s->bytes = std::move(v);
    return;
  }
  const int64_t t0 = ts.front(), span = std::max<int64_t>(1, ts.back() - t0);
  std::vector<int64_t> out_ts;
  std::vector<double> out_v;
  size_t bucket = SIZE_MAX;
  for (size_t i = 0; i < ts.size(); ++i) {
    size_t b = static_cast<size_t>(static_cast<double>(ts[i] - t0) / static_cast<double>(span) *
                                   static_cast<double>(max_points - 1));
    if (b != bucket) {
      out_ts.push_back(ts[i]);
      out_v.push_back(v[i]);
      bucket = b;
    } else {
      out_v.back() = std::max(out_v.back(), v[i]);
    }
  }
  s->ts_ns = std::move(out_ts);
  s->bytes = std::move(out_v);
}

}  // namespace

std::vector<MemorySeries> ComputeMemorySeries(const Trace& trace, size_t max_points) {
  std::map<std::tuple<int32_t, int64_t, int64_t>, MemorySeries> by_device;
  auto alloc_key = trace.strings.Find("Total Allocated");
  auto bytes_key = trace.strings.Find("Bytes");
  auto type_key = trace.strings.Find("Device Type");
  auto id_key = trace.strings.Find("Device Id");
  if (alloc_key || bytes_key) {
    const InstantTable& in = trace.instants;
    for (uint32_t i = 0; i < in.size(); ++i) {
      std::optional<double> alloc =
          alloc_key ? ArgNumberAt(trace, in.arg_begin[i], in.arg_count[i], *alloc_key) : std::nullopt;
      // Older traces (2021 Kineto) carry only each event's signed Bytes: the
      // series is then the running sum, i.e. net allocated since the trace began.
      std::optional<double> delta;
      if (!alloc && bytes_key) delta = ArgNumberAt(trace, in.arg_begin[i], in.arg_count[i], *bytes_key);
      if (!alloc && !delta) continue;
      int64_t type =
          type_key ? static_cast<int64_t>(ArgNumberAt(trace, in.arg_begin[i], in.arg_count[i], *type_key).value_or(0))
                   : 0;
      int64_t id =
          id_key ? static_cast<int64_t>(ArgNumberAt(trace, in.arg_begin[i], in.arg_count[i], *id_key).value_or(-1))
                 : -1;
      int32_t rank = trace.tracks.rank[in.track[i]];
      MemorySeries& s = by_device[{rank, type, id}];
      if (s.label.empty()) {
        s.label = (rank != kNoRank ? "rank " + std::to_string(rank) + " " : std::string()) + DeviceTypeName(type) +
                  (id >= 0 ? ":" + std::to_string(id) : std::string());
        if (delta) s.label += " (net since trace start)";
      }
      s.ts_ns.push_back(in.ts_ns[i]);
      s.bytes.push_back(alloc ? *alloc : *delta);
      s.deltas = !alloc;
    }
  }
  std::vector<MemorySeries> out;
  for (auto& [key, s] : by_device) out.push_back(std::move(s));
  // memory_record.csv: counter tracks "<Component> Total Allocated(MB) NPU:<n>", values in MB.
  std::vector<int32_t> series_of_track(trace.tracks.size(), -1);
  for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
    if (trace.tracks.kind[t] != TrackKind::kCounter) continue;
    std::string_view name = trace.Str(trace.tracks.name[t]);
    if (name.find("Total Allocated(MB)") == std::string_view::npos) continue;
    series_of_track[t] = static_cast<int32_t>(out.size());
    MemorySeries s;
    int32_t rank = trace.tracks.rank[t];
    s.label = (rank != kNoRank ? "rank " + std::to_string(rank) + " " : std::string()) + std::string(name);
    out.push_back(std::move(s));
  }
  const CounterTable& c = trace.counters;
  for (size_t i = 0; i < c.size(); ++i) {
    int32_t k = series_of_track[c.track[i]];
    if (k < 0) continue;
    out[static_cast<size_t>(k)].ts_ns.push_back(c.ts_ns[i]);
    out[static_cast<size_t>(k)].bytes.push_back(c.value[i] * 1024.0 * 1024.0);
  }
  std::erase_if(out, [](const MemorySeries& s) { return s.ts_ns.empty(); });
  for (MemorySeries& s : out) Downsample(&s, max_points);
  return out;
}

}  // namespace aiprof
