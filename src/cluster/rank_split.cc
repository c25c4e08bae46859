#include "src/cluster/rank_split.h"

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>

namespace aiprof {
namespace {

// Appends rows `rows` of `in` to `*out`, every column as it is; the caller
// renumbers the columns that refer to other rows.
template <typename Table>
void CopyRows(const Table& in, const std::vector<uint32_t>& rows, Table* out) {
  std::vector<void*> columns;
  Table::Columns(*out, [&](auto& column) { columns.push_back(&column); });
  size_t k = 0;
  Table::Columns(in, [&](const auto& column) {
    auto* to = static_cast<std::remove_cvref_t<decltype(column)>*>(columns[k++]);
    for (uint32_t r : rows) to->push_back(column[r]);
  });
}

// "rank<digits>." or "part<digits>." at the start of `key`: its length, else 0.
size_t PartPrefixLength(std::string_view key) {
  for (std::string_view p : {std::string_view("rank"), std::string_view("part")}) {
    if (!key.starts_with(p)) continue;
    size_t i = p.size();
    while (i < key.size() && std::isdigit(static_cast<unsigned char>(key[i]))) ++i;
    if (i > p.size() && i < key.size() && key[i] == '.') return i + 1;
  }
  return 0;
}

// The trace's metadata keys that are no part's: not "rank<R>.<key>" nor
// "part<i>.<key>" (MergeTraces' prefixes), nor the merge's description of
// itself.
std::map<std::string, std::string> SharedMetadata(const Trace& trace) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : trace.metadata) {
    if (PartPrefixLength(key) == 0 && key != "ranks" && key != "rank_count") out[key] = value;
  }
  return out;
}

// The metadata rank `rank`'s own file had (see rank_split.h): the shared
// keys, then its "rank<R>.<key>" as "<key>".
std::map<std::string, std::string> PartMetadata(const Trace& trace, const std::map<std::string, std::string>& shared,
                                                int32_t rank) {
  std::map<std::string, std::string> out = shared;
  const std::string mine = "rank" + std::to_string(rank) + ".";
  for (auto it = trace.metadata.lower_bound(mine); it != trace.metadata.end() && it->first.starts_with(mine); ++it) {
    if (it->first.size() > mine.size()) out[it->first.substr(mine.size())] = it->second;
  }
  out["rank"] = std::to_string(rank);
  return out;
}

constexpr uint32_t kNoPart = UINT32_MAX;

// Renumbers a column of track ids by `local` (ids past its end, kNoTrack,
// stay as they are).
void LocalTracks(const std::vector<uint32_t>& local, ChunkedVector<TrackId>* column) {
  for (size_t i = 0; i < column->size(); ++i) {
    const uint32_t t = (*column)[i];
    if (t < local.size()) (*column)[i] = TrackId{local[t]};
  }
}

// Moves the args of every row of a table into `out`, in row order, each
// row's begin to its copy.
void CopyArgs(const Trace& in, ChunkedVector<uint64_t>* begin, const ChunkedVector<uint16_t>& count, Trace* out) {
  for (size_t i = 0; i < begin->size(); ++i) {
    const uint64_t from = (*begin)[i];
    (*begin)[i] = out->args.size();
    for (uint64_t a = from; a < from + count[i] && a < in.args.size(); ++a) out->args.push_back(in.args[a]);
  }
}

}  // namespace

std::vector<int32_t> TrackRanks(const Trace& trace) {
  std::set<int32_t> ranks;
  for (size_t i = 0; i < trace.tracks.size(); ++i) {
    if (trace.tracks.rank[i] != kNoRank) ranks.insert(trace.tracks.rank[i]);
  }
  return std::vector<int32_t>(ranks.begin(), ranks.end());
}

RanklessPart CountRankless(const Trace& trace) {
  RanklessPart r;
  for (size_t i = 0; i < trace.tracks.size(); ++i) r.tracks += trace.tracks.rank[i] == kNoRank;
  if (r.tracks == 0) return r;
  auto rankless = [&](uint32_t t) { return t < trace.tracks.size() && trace.tracks.rank[t] == kNoRank; };
  for (size_t s = 0; s < trace.slices.size(); ++s) r.slices += rankless(trace.slices.track[s]);
  for (size_t c = 0; c < trace.counters.size(); ++c) r.counter_points += rankless(trace.counters.track[c]);
  return r;
}

struct RankSplitter::Rows {
  std::vector<uint32_t> tracks, slices, instants, counters, flows, steps, op_metrics, step_breakdown, samples;
};

RankSplitter::RankSplitter(const Trace& trace) : trace_(trace) {
  ranks_ = TrackRanks(trace);
  strings_.resize(trace.strings.size());
  for (uint32_t k = 0; k < strings_.size(); ++k) strings_[k] = trace.strings.Get(StringId{k});
  shared_metadata_ = SharedMetadata(trace);
  std::map<int32_t, uint32_t> part_of_rank;
  for (uint32_t i = 0; i < ranks_.size(); ++i) part_of_rank[ranks_[i]] = i;
  auto of_rank = [&](int32_t rank) {
    auto it = part_of_rank.find(rank);
    return it == part_of_rank.end() ? kNoPart : it->second;
  };
  rows_.resize(ranks_.size());
  const TrackTable& tracks = trace.tracks;
  part_of_track_.assign(tracks.size(), kNoPart);
  local_track_.assign(tracks.size(), kNoTrack);
  for (uint32_t t = 0; t < tracks.size(); ++t) {
    const uint32_t p = of_rank(tracks.rank[t]);
    if (p == kNoPart) continue;
    part_of_track_[t] = p;
    local_track_[t] = static_cast<uint32_t>(rows_[p].tracks.size());
    rows_[p].tracks.push_back(t);
  }
  auto part_of = [&](uint32_t track) { return track < part_of_track_.size() ? part_of_track_[track] : kNoPart; };
  // Slices are ordered by (track, start): a part's slices, whole tracks
  // renumbered in order, keep that order and their depths.
  local_slice_.assign(trace.slices.size(), kNoSlice);
  for (uint32_t s = 0; s < trace.slices.size(); ++s) {
    const uint32_t p = part_of(trace.slices.track[s]);
    if (p == kNoPart) continue;
    local_slice_[s] = static_cast<uint32_t>(rows_[p].slices.size());
    rows_[p].slices.push_back(s);
  }
  auto slice_part = [&](uint32_t s) {
    return s < local_slice_.size() && local_slice_[s] != kNoSlice ? part_of(trace.slices.track[s]) : kNoPart;
  };
  auto add = [&](uint32_t p, std::vector<uint32_t> Rows::*list, uint32_t row) {
    if (p != kNoPart) (rows_[p].*list).push_back(row);
  };
  for (uint32_t i = 0; i < trace.instants.size(); ++i) add(part_of(trace.instants.track[i]), &Rows::instants, i);
  for (uint32_t i = 0; i < trace.counters.size(); ++i) add(part_of(trace.counters.track[i]), &Rows::counters, i);
  for (uint32_t i = 0; i < trace.samples.size(); ++i) add(part_of(trace.samples.track[i]), &Rows::samples, i);
  for (uint32_t i = 0; i < trace.flows.size(); ++i) {
    // Both ends in one part (a flow between ranks is no rank's).
    const uint32_t p = slice_part(trace.flows.from_slice[i]);
    if (p == slice_part(trace.flows.to_slice[i])) add(p, &Rows::flows, i);
  }
  for (uint32_t i = 0; i < trace.steps.size(); ++i) {
    // On one of the part's tracks, or of its rank without a track.
    const uint32_t t = trace.steps.track[i];
    add(t < tracks.size() ? part_of(t) : of_rank(trace.steps.rank[i]), &Rows::steps, i);
  }
  for (uint32_t i = 0; i < trace.op_metrics.size(); ++i) {
    // Joined to one of the part's slices, or an aggregate row of its rank.
    const uint32_t s = trace.op_metrics.slice[i];
    add(s == kNoSlice ? of_rank(trace.op_metrics.rank[i]) : slice_part(s), &Rows::op_metrics, i);
  }
  for (uint32_t i = 0; i < trace.step_breakdown.size(); ++i) {
    add(of_rank(trace.step_breakdown.rank[i]), &Rows::step_breakdown, i);
  }
}

RankSplitter::~RankSplitter() = default;

std::unique_ptr<Trace> RankSplitter::Part(size_t i) const {
  const Trace& in = trace_;
  const Rows& rows = rows_[i];
  auto out = std::make_unique<Trace>();
  out->strings.AdoptExternal(strings_);
  out->backing = in.backing;  // the bytes may lie in the input's mapped file
  CopyRows(in.tracks, rows.tracks, &out->tracks);
  CopyRows(in.slices, rows.slices, &out->slices);
  LocalTracks(local_track_, &out->slices.track);
  CopyArgs(in, &out->slices.arg_begin, out->slices.arg_count, out.get());
  CopyRows(in.instants, rows.instants, &out->instants);
  LocalTracks(local_track_, &out->instants.track);
  CopyArgs(in, &out->instants.arg_begin, out->instants.arg_count, out.get());
  CopyRows(in.counters, rows.counters, &out->counters);
  LocalTracks(local_track_, &out->counters.track);
  CopyRows(in.flows, rows.flows, &out->flows);
  for (size_t k = 0; k < out->flows.size(); ++k) {
    out->flows.from_slice[k] = SliceId{local_slice_[out->flows.from_slice[k]]};
    out->flows.to_slice[k] = SliceId{local_slice_[out->flows.to_slice[k]]};
  }
  CopyRows(in.steps, rows.steps, &out->steps);
  LocalTracks(local_track_, &out->steps.track);
  CopyRows(in.op_metrics, rows.op_metrics, &out->op_metrics);
  for (size_t k = 0; k < out->op_metrics.size(); ++k) {
    const uint32_t s = out->op_metrics.slice[k];
    if (s != kNoSlice) out->op_metrics.slice[k] = SliceId{local_slice_[s]};
  }
  CopyRows(in.step_breakdown, rows.step_breakdown, &out->step_breakdown);
  std::vector<uint32_t> callsites(in.callsites.size());
  for (uint32_t k = 0; k < callsites.size(); ++k) callsites[k] = k;
  CopyRows(in.callsites, callsites, &out->callsites);  // shared by every rank's samples
  CopyRows(in.samples, rows.samples, &out->samples);
  LocalTracks(local_track_, &out->samples.track);
  out->metadata = PartMetadata(in, shared_metadata_, ranks_[i]);
  return out;
}

}  // namespace aiprof
