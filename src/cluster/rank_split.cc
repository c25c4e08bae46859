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

// The metadata rank `rank`'s own file had (see rank_split.h).
std::map<std::string, std::string> PartMetadata(const Trace& trace, int32_t rank) {
  std::map<std::string, std::string> out;
  const std::string mine = "rank" + std::to_string(rank) + ".";
  for (const auto& [key, value] : trace.metadata) {
    // The merge's description of itself is no rank's.
    if (PartPrefixLength(key) == 0 && key != "ranks" && key != "rank_count") out[key] = value;
  }
  for (const auto& [key, value] : trace.metadata) {
    if (key.starts_with(mine) && key.size() > mine.size()) out[key.substr(mine.size())] = value;
  }
  out["rank"] = std::to_string(rank);
  return out;
}

class PartBuilder {
 public:
  PartBuilder(const Trace& in, int32_t rank, Trace* out) : in_(in), rank_(rank), out_(out) {}

  void Run() {
    Strings();
    Tracks();
    Slices();
    Instants();
    OnTracks(in_.counters, in_.counters.track, &out_->counters, &out_->counters.track);
    Flows();
    Steps();
    OpMetrics();
    std::vector<uint32_t> breakdown;
    for (uint32_t i = 0; i < in_.step_breakdown.size(); ++i) {
      if (in_.step_breakdown.rank[i] == rank_) breakdown.push_back(i);
    }
    CopyRows(in_.step_breakdown, breakdown, &out_->step_breakdown);
    std::vector<uint32_t> callsites(in_.callsites.size());
    for (uint32_t i = 0; i < callsites.size(); ++i) callsites[i] = i;
    CopyRows(in_.callsites, callsites, &out_->callsites);  // shared by every rank's samples
    OnTracks(in_.samples, in_.samples.track, &out_->samples, &out_->samples.track);
    out_->metadata = PartMetadata(in_, rank_);
  }

 private:
  void Strings() {
    std::vector<std::string_view> views(in_.strings.size());
    for (uint32_t i = 0; i < views.size(); ++i) views[i] = in_.strings.Get(StringId{i});
    out_->strings.AdoptExternal(std::move(views));
    out_->backing = in_.backing;  // the bytes may lie in the input's mapped file
  }

  void Tracks() {
    track_.assign(in_.tracks.size(), kNoTrack);
    std::vector<uint32_t> rows;
    for (uint32_t t = 0; t < in_.tracks.size(); ++t) {
      if (in_.tracks.rank[t] != rank_) continue;
      track_[t] = static_cast<uint32_t>(rows.size());
      rows.push_back(t);
    }
    CopyRows(in_.tracks, rows, &out_->tracks);
  }

  // Rows of a table on the part's tracks, their track renumbered.
  template <typename Table>
  void OnTracks(const Table& in, const ChunkedVector<TrackId>& in_track, Table* out,
                ChunkedVector<TrackId>* out_track) {
    std::vector<uint32_t> rows;
    for (uint32_t i = 0; i < in.size(); ++i) {
      if (in_track[i] < track_.size() && track_[in_track[i]] != kNoTrack) rows.push_back(i);
    }
    const size_t first = out->size();
    CopyRows(in, rows, out);
    for (size_t i = first; i < out->size(); ++i) (*out_track)[i] = TrackId{track_[(*out_track)[i]]};
  }

  // Args of the rows [first, end) of a table: copied in row order, each
  // row's begin moved to its copy.
  void MoveArgs(ChunkedVector<uint64_t>* begin, const ChunkedVector<uint16_t>& count, size_t first) {
    for (size_t i = first; i < begin->size(); ++i) {
      const uint64_t from = (*begin)[i];
      (*begin)[i] = out_->args.size();
      for (uint64_t a = from; a < from + count[i] && a < in_.args.size(); ++a) out_->args.push_back(in_.args[a]);
    }
  }

  void Slices() {
    slice_.assign(in_.slices.size(), kNoSlice);
    std::vector<uint32_t> rows;
    for (uint32_t s = 0; s < in_.slices.size(); ++s) {
      const uint32_t t = in_.slices.track[s];
      if (t >= track_.size() || track_[t] == kNoTrack) continue;
      slice_[s] = static_cast<uint32_t>(rows.size());
      rows.push_back(s);
    }
    // Slices are ordered by (track, start): a subset of whole tracks,
    // renumbered in order, keeps that order and the depths.
    CopyRows(in_.slices, rows, &out_->slices);
    for (size_t i = 0; i < out_->slices.size(); ++i) out_->slices.track[i] = TrackId{track_[out_->slices.track[i]]};
    MoveArgs(&out_->slices.arg_begin, out_->slices.arg_count, 0);
  }

  void Instants() {
    OnTracks(in_.instants, in_.instants.track, &out_->instants, &out_->instants.track);
    MoveArgs(&out_->instants.arg_begin, out_->instants.arg_count, 0);
  }

  uint32_t Slice(uint32_t s) const { return s < slice_.size() ? slice_[s] : kNoSlice; }

  void Flows() {
    std::vector<uint32_t> rows;
    for (uint32_t i = 0; i < in_.flows.size(); ++i) {
      if (Slice(in_.flows.from_slice[i]) != kNoSlice && Slice(in_.flows.to_slice[i]) != kNoSlice) rows.push_back(i);
    }
    CopyRows(in_.flows, rows, &out_->flows);
    for (size_t i = 0; i < out_->flows.size(); ++i) {
      out_->flows.from_slice[i] = SliceId{Slice(out_->flows.from_slice[i])};
      out_->flows.to_slice[i] = SliceId{Slice(out_->flows.to_slice[i])};
    }
  }

  // A step on one of the part's tracks, or of its rank without a track.
  void Steps() {
    std::vector<uint32_t> rows;
    for (uint32_t i = 0; i < in_.steps.size(); ++i) {
      const uint32_t t = in_.steps.track[i];
      const bool mine = t < track_.size() ? track_[t] != kNoTrack : in_.steps.rank[i] == rank_;
      if (mine) rows.push_back(i);
    }
    CopyRows(in_.steps, rows, &out_->steps);
    for (size_t i = 0; i < out_->steps.size(); ++i) {
      const uint32_t t = out_->steps.track[i];
      if (t < track_.size()) out_->steps.track[i] = TrackId{track_[t]};
    }
  }

  // Rows joined to one of the part's slices, and the rank's aggregate rows.
  void OpMetrics() {
    std::vector<uint32_t> rows;
    for (uint32_t i = 0; i < in_.op_metrics.size(); ++i) {
      const uint32_t s = in_.op_metrics.slice[i];
      if (s == kNoSlice ? in_.op_metrics.rank[i] == rank_ : Slice(s) != kNoSlice) rows.push_back(i);
    }
    CopyRows(in_.op_metrics, rows, &out_->op_metrics);
    for (size_t i = 0; i < out_->op_metrics.size(); ++i) {
      const uint32_t s = out_->op_metrics.slice[i];
      if (s != kNoSlice) out_->op_metrics.slice[i] = SliceId{Slice(s)};
    }
  }

  const Trace& in_;
  const int32_t rank_;
  Trace* out_;
  std::vector<uint32_t> track_;  // input track → part track, kNoTrack when not the rank's
  std::vector<uint32_t> slice_;  // input slice → part slice, kNoSlice when not the rank's
};

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

std::unique_ptr<Trace> RankPart(const Trace& trace, int32_t rank) {
  auto out = std::make_unique<Trace>();
  PartBuilder(trace, rank, out.get()).Run();
  return out;
}

}  // namespace aiprof
