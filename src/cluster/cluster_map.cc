#include "src/cluster/cluster_map.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "src/analysis/communication/communication.h"
#include "src/analysis/memory/memory_peaks.h"
#include "src/analysis/summary/step_breakdown.h"
#include "src/analysis/summary/summary.h"
#include "src/cluster/rank_split.h"
#include "src/importers/common/folder_importer.h"

namespace aiprof {
namespace {

class StringTable {
 public:
  explicit StringTable(std::vector<std::string>* out) : out_(out) {}
  uint32_t Id(std::string_view s) {
    auto it = ids_.find(std::string(s));
    if (it != ids_.end()) return it->second;
    const uint32_t id = static_cast<uint32_t>(out_->size());
    out_->emplace_back(s);
    ids_.emplace(std::string(s), id);
    return id;
  }

 private:
  std::vector<std::string>* out_;
  std::unordered_map<std::string, uint32_t> ids_;
};

int32_t TraceRank(const Trace& t) {
  auto it = t.metadata.find("rank");
  if (it != t.metadata.end()) return static_cast<int32_t>(std::strtol(it->second.c_str(), nullptr, 10));
  for (size_t i = 0; i < t.tracks.size(); ++i) {
    if (t.tracks.rank[i] != kNoRank) return t.tracks.rank[i];
  }
  return kDigestNoRank;
}

void MapSteps(const Trace& trace, const CommunicationResult& comm, RankDigest* d) {
  std::vector<size_t> order(trace.steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return trace.steps.ts_ns[a] < trace.steps.ts_ns[b]; });
  std::map<int64_t, StepBreakdown> breakdowns;
  for (StepBreakdown& b : ComputeStepBreakdowns(trace)) {
    if (b.source == "timeline") breakdowns.emplace(b.step, std::move(b));
  }
  std::map<int64_t, const StepCommunication*> profiler;
  for (const StepCommunication& s : comm.stats.steps) profiler.emplace(s.number, &s);
  auto value = [](const StepBreakdown& b, const char* key) {
    auto it = b.values_ns.find(key);
    return it == b.values_ns.end() ? int64_t{-1} : it->second;
  };
  for (size_t i : order) {
    DigestStep s;
    s.number = trace.steps.number[i];
    s.start_ns = trace.steps.ts_ns[i];
    s.dur_ns = trace.steps.dur_ns[i];
    if (auto it = breakdowns.find(s.number); it != breakdowns.end()) {
      s.computing_ns = value(it->second, "Computing");
      s.communication_ns = value(it->second, "Communication");
      s.exposed_comm_ns = value(it->second, "Communication(Not Overlapped)");
      s.free_ns = value(it->second, "Free");
    }
    if (auto it = profiler.find(s.number); it != profiler.end()) {
      s.profiler_comm_ns = it->second->profiler_comm_ns;
      s.profiler_exposed_ns = it->second->profiler_exposed_ns;
    }
    d->steps.push_back(s);
  }
}

// The collectives and their steps are the communication analysis's own
// (CommunicationResult: read once, each collective's step by the rule the
// multi-rank analysis pairs by, collective_pairing.h), in arrival order.
void MapCollectives(const Trace& trace, const CommunicationResult& comm, StringTable* strings, RankDigest* d) {
  const std::vector<CollectiveSlice>& collectives = comm.collectives;
  std::vector<uint32_t> order(collectives.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return trace.slices.ts_ns[collectives[a].slice] < trace.slices.ts_ns[collectives[b].slice];
  });
  d->collectives.reserve(collectives.size());
  for (uint32_t i : order) {
    const CollectiveSlice& c = collectives[i];
    DigestCollective dc;
    dc.group = strings->Id(trace.Str(c.group));
    dc.type = static_cast<uint8_t>(c.type);
    dc.device = c.device;
    dc.arrival_ns = trace.slices.ts_ns[c.slice];
    dc.end_ns = dc.arrival_ns + trace.slices.dur_ns[c.slice];
    dc.bytes = c.bytes;
    dc.step = comm.collective_steps[i];
    d->collectives.push_back(dc);
  }
  for (const CollectiveTypeStats& t : comm.stats.by_type) {
    DigestCollectiveType dt;
    dt.type = static_cast<uint8_t>(t.type);
    dt.count = t.count;
    dt.sized = t.sized;
    dt.total_ns = t.total_ns;
    dt.max_ns = t.max_ns;
    dt.sized_time_ns = t.sized_time_ns;
    dt.group_size = t.group_size;
    dt.bytes = t.bytes;
    d->collective_types.push_back(dt);
  }
  for (const RankCommunication& r : comm.cross.ranks) {
    d->span_ns = r.span_ns;
    d->profiler_elapse_ns = r.profiler_elapse_ns;
    d->profiler_wait_ns = r.profiler_wait_ns;
    d->profiler_transit_ns = r.profiler_transit_ns;
    d->profiler_sync_ns = r.profiler_sync_ns;
    d->profiler_idle_ns = r.profiler_idle_ns;
  }
  for (const LinkBandwidth& l : comm.cross.links) {
    d->links.push_back(DigestLink{l.link, l.transport, l.bytes, l.time_ns});
  }
}

}  // namespace

std::string StableOpName(std::string_view name) {
  // Python objects print their address (" at 0x7f3a..."), which differs
  // between processes; without it the same op matches on every rank.
  std::string out;
  size_t i = 0;
  for (size_t at = name.find(" at 0x"); at != std::string_view::npos; at = name.find(" at 0x", i)) {
    size_t end = at + 6;
    while (end < name.size() && std::isxdigit(static_cast<unsigned char>(name[end]))) ++end;
    if (end == at + 6) {  // " at 0x" without digits: keep it
      out.append(name.substr(i, end - i));
    } else {
      out.append(name.substr(i, at - i));
    }
    i = end;
  }
  out.append(name.substr(i));
  return out;
}

namespace {

void MapOps(const Trace& trace, StringTable* strings, RankDigest* d) {
  struct Acc {
    uint32_t slice;  // first slice, for category and kind
    uint32_t name;   // its stable name, in `names`
    uint64_t count = 0;
    int64_t total = 0, min = INT64_MAX, max = INT64_MIN;
    DurationSketch sketch;
  };
  // One stable name per distinct name string, computed once.
  std::vector<uint32_t> stable_of(trace.strings.size(), UINT32_MAX);
  std::unordered_map<std::string, uint32_t> stable_ids;
  std::vector<std::string> names;
  std::unordered_map<uint64_t, Acc> by;
  // A call nested in a call of the same op on its host thread (aten::sort
  // inside aten::sort, a recursive Python function) is part of the outer
  // call: only outermost calls are counted, so an op's total is the time the
  // rank spent in it, never more. Device tracks are left as they are: tasks
  // of one name that overlap there (HCCL's Notify Wait on parallel streams)
  // are separate work, summed as the summary sums them. Slices are in
  // (track, start, longest first) order; `open` holds the counted calls
  // still open on the track.
  std::vector<std::pair<int64_t, uint64_t>> open;  // (end, key)
  std::unordered_map<uint64_t, uint32_t> open_of;  // key → calls of it in `open`
  uint32_t track = UINT32_MAX;
  for (uint32_t s = 0; s < trace.slices.size(); ++s) {
    uint32_t& stable = stable_of[trace.slices.name[s].raw];
    if (stable == UINT32_MAX) {
      std::string n = StableOpName(trace.Str(trace.slices.name[s]));
      auto [it, fresh] = stable_ids.try_emplace(n, static_cast<uint32_t>(names.size()));
      if (fresh) names.push_back(std::move(n));
      stable = it->second;
    }
    const uint64_t key = (static_cast<uint64_t>(trace.slices.category[s].raw) << 32) | stable;
    const int64_t ts = trace.slices.ts_ns[s];
    if (trace.slices.track[s] != track) {
      track = trace.slices.track[s];
      open.clear();
      open_of.clear();
    }
    if (trace.tracks.device[track] == kHostDevice) {
      while (!open.empty() && open.back().first <= ts) {
        if (--open_of[open.back().second] == 0) open_of.erase(open.back().second);
        open.pop_back();
      }
      if (open_of.contains(key)) continue;  // inside a call of the same op
      open.emplace_back(ts + trace.slices.dur_ns[s], key);
      ++open_of[key];
    }
    auto [it, fresh] = by.try_emplace(key, Acc{s, stable, 0, 0, INT64_MAX, INT64_MIN, DurationSketch()});
    Acc& a = it->second;
    const int64_t dur = trace.slices.dur_ns[s];
    ++a.count;
    a.total += dur;
    a.min = std::min(a.min, dur);
    a.max = std::max(a.max, dur);
    a.sketch.Add(dur);
  }
  std::vector<Acc*> ops;
  for (auto& [key, a] : by) ops.push_back(&a);
  std::sort(ops.begin(), ops.end(), [&](const Acc* a, const Acc* b) {
    if (a->total != b->total) return a->total > b->total;
    return a->slice < b->slice;
  });
  std::optional<DigestOp> other;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Acc& a = *ops[i];
    if (i < kDigestMaxOps) {
      DigestOp o;
      o.name = strings->Id(names[a.name]);
      o.category = strings->Id(trace.Str(trace.slices.category[a.slice]));
      o.kind = static_cast<uint8_t>(trace.slices.kind[a.slice]);
      o.count = a.count;
      o.total_ns = a.total;
      o.min_ns = a.min;
      o.max_ns = a.max;
      o.sketch = a.sketch;
      d->ops.push_back(std::move(o));
      continue;
    }
    if (!other) {
      other.emplace();
      other->name = strings->Id("(other ops)");
      other->category = strings->Id("");
      other->min_ns = INT64_MAX;
      other->max_ns = INT64_MIN;
    }
    other->count += a.count;
    other->total_ns += a.total;
    other->min_ns = std::min(other->min_ns, a.min);
    other->max_ns = std::max(other->max_ns, a.max);
    other->sketch.Merge(a.sketch);
  }
  if (other) d->ops.push_back(std::move(*other));
}

void MapDevices(const Trace& trace, RankDigest* d) {
  std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> by_device;
  for (uint32_t s = 0; s < trace.slices.size(); ++s) {
    if (!IsDeviceActivity(trace.slices.kind[s])) continue;
    const int64_t a = trace.slices.ts_ns[s];
    by_device[trace.tracks.device[trace.slices.track[s]]].emplace_back(a, a + trace.slices.dur_ns[s]);
  }
  for (auto& [device, iv] : by_device) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& [a, b] : iv) {
      lo = std::min(lo, a);
      hi = std::max(hi, b);
    }
    DigestDevice v;
    v.device = device;
    v.busy_ns = UnionLengthNs(&iv);
    v.span_ns = hi - lo;
    d->devices.push_back(v);
  }
  for (const MemoryPeak& p : ComputeMemoryPeaks(trace).devices) {
    d->memory.push_back(DigestMemory{p.device_type, p.device_id, p.peak_allocated, p.peak_reserved, p.capacity_bytes});
  }
}

std::string MetadataOr(const Trace& t, std::initializer_list<const char*> keys, std::string fallback) {
  for (const char* k : keys) {
    auto it = t.metadata.find(k);
    if (it != t.metadata.end() && !it->second.empty()) return it->second;
  }
  return fallback;
}

}  // namespace

std::string LocalHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

RankDigest MapTrace(const Trace& trace, const std::string& source, const std::string& default_host) {
  RankDigest d;
  StringTable strings(&d.strings);
  strings.Id("");  // index 0: unknown group / empty category
  d.rank = TraceRank(trace);
  d.world_size = std::strtoll(MetadataOr(trace, {"world_size"}, "0").c_str(), nullptr, 10);
  d.host = MetadataOr(trace, {"hostname", "host_name", "host"}, default_host);
  d.source = source;
  d.source_format = MetadataOr(trace, {"source_format"}, "");
  d.slice_count = trace.slices.size();
  const CommunicationResult comm = ComputeCommunication(trace);
  MapSteps(trace, comm, &d);
  MapCollectives(trace, comm, &strings, &d);
  MapOps(trace, &strings, &d);
  MapDevices(trace, &d);
  for (const auto& [kind, e] : trace.diagnostics.entries()) {
    d.diagnostics.push_back(DigestDiagnostic{kind, e.first_where, e.description, e.count});
  }
  return d;
}

std::vector<MapUnit> ListMapUnits(const std::vector<std::string>& inputs) {
  std::vector<MapUnit> out;
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(input, ec)) {
      out.push_back(MapUnit{input, static_cast<int>(FolderUnitKind::kFile), ""});
      continue;
    }
    StatusOr<std::vector<FolderUnit>> units = ListFolderUnits(input);
    if (!units.ok()) {
      out.push_back(MapUnit{input, -1, units.status().message()});
      continue;
    }
    for (const FolderUnit& u : *units) out.push_back(MapUnit{u.path, static_cast<int>(u.kind), ""});
  }
  return out;
}

namespace {

std::string JoinRanks(const std::vector<int32_t>& ranks) {
  std::string out;
  for (int32_t r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

// One digest per rank of a trace that holds several (rank_split.h), as if
// each rank had come in its own file. What the trace counts for the whole
// file goes beside the first rank: its import diagnostics (the import does
// not tell which rank's), and the tracks of no rank it leaves out.
std::vector<RankDigest> MapRanks(const Trace& t, const std::vector<int32_t>& ranks, const std::string& path,
                                 const std::string& default_host) {
  std::vector<RankDigest> out;
  const RankSplitter split(t);
  for (size_t i = 0; i < split.ranks().size(); ++i) out.push_back(MapTrace(*split.Part(i), path, default_host));
  std::vector<DigestDiagnostic>& first = out.front().diagnostics;
  const std::string whole = " (counted over the whole file, ranks " + JoinRanks(ranks) + ")";
  for (const auto& [kind, e] : t.diagnostics.entries()) {
    first.push_back(DigestDiagnostic{kind, e.first_where, e.description + whole, e.count});
  }
  if (RanklessPart none = CountRankless(t); none.tracks > 0) {
    const std::string what = std::to_string(none.tracks) + " tracks of no rank (" + std::to_string(none.slices) +
                             " slices, " + std::to_string(none.counter_points) +
                             " counter points: processes that are not a rank of the job, such as its launcher) are "
                             "in no rank's digest";
    first.push_back(DigestDiagnostic{"rankless_tracks", path, what, none.tracks});
  }
  return out;
}

}  // namespace

std::vector<RankDigest> MapUnitToDigests(const MapUnit& unit, const std::string& default_host) {
  auto failed = [&](const std::string& why) {
    RankDigest d;
    d.source = unit.path;
    d.rank = RankFromName(unit.path);
    d.host = default_host;
    d.error = why.empty() ? unit.path + ": cannot be read" : why;
    return std::vector<RankDigest>{std::move(d)};
  };
  if (unit.kind < 0) return failed(unit.error);
  StatusOr<std::unique_ptr<Trace>> t = ImportRankUnit(FolderUnit{unit.path, static_cast<FolderUnitKind>(unit.kind)});
  if (!t.ok()) return failed(t.status().message());
  const std::vector<int32_t> ranks = TrackRanks(**t);
  if (ranks.size() < 2) return {MapTrace(**t, unit.path, default_host)};
  // A trace of several ranks that says it is one of them (its data, or
  // rankN in its name, which the import stamped on its tracks of no rank):
  // which tracks are that rank's is not known.
  if (auto it = (*t)->metadata.find("rank"); it != (*t)->metadata.end()) {
    return failed(unit.path + ": holds ranks " + JoinRanks(ranks) +
                  " in one trace, but its data or its name says rank " + it->second +
                  "; cluster cannot tell which of its tracks are that rank's (rename a whole job's trace without "
                  "rankN, or give one input per rank)");
  }
  if (ranks.size() > kMaxRanksPerTrace) {
    return failed(unit.path + ": holds " + std::to_string(ranks.size()) + " ranks in one trace (ranks " +
                  std::to_string(ranks.front()) + " to " + std::to_string(ranks.back()) + "), more than the " +
                  std::to_string(kMaxRanksPerTrace) + " cluster splits from one file; give each rank its own file");
  }
  return MapRanks(**t, ranks, unit.path, default_host);
}

std::vector<std::vector<RankDigest>> MapUnitGroups(const std::vector<MapUnit>& units, size_t offset, size_t stride,
                                                   size_t threads, const std::string& default_host) {
  std::vector<size_t> mine;
  for (size_t i = offset; i < units.size(); i += std::max<size_t>(1, stride)) mine.push_back(i);
  std::vector<std::vector<RankDigest>> out(mine.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t k; (k = next.fetch_add(1)) < mine.size();) out[k] = MapUnitToDigests(units[mine[k]], default_host);
  };
  const size_t n = std::min(mine.size(), std::max<size_t>(1, threads));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return out;
}

std::vector<RankDigest> MapUnits(const std::vector<MapUnit>& units, size_t offset, size_t stride, size_t threads,
                                 const std::string& default_host) {
  std::vector<RankDigest> out;
  for (std::vector<RankDigest>& group : MapUnitGroups(units, offset, stride, threads, default_host)) {
    for (RankDigest& d : group) out.push_back(std::move(d));
  }
  return out;
}

}  // namespace aiprof
