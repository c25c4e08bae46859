// TraceBuilder: the only writer of Trace tables during import.
//
// Importers hand it neutral events in any order; Finalize() applies the time
// base, matches B/E pairs, sorts slices per track, computes depth, classifies
// events and tracks into layers, links flows and extracts steps.
#ifndef AIPROF_SRC_MODEL_TRACE_BUILDER_H_
#define AIPROF_SRC_MODEL_TRACE_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

struct ImportBudget;  // src/base/import_budget.h

// A pid or tid as written: a number, or a string such as "Spans".
struct IdValue {
  bool is_string = false;
  int64_t num = 0;
  StringId str;
  static IdValue Num(int64_t n) { return IdValue{false, n, StringId{}}; }
  static IdValue Str(StringId s) { return IdValue{true, 0, s}; }
};

// Where a B/E or flow event came from, for the diagnostics of pairing them
// at Finalize (unmatched_end, unterminated_begin, end_name_mismatch,
// flow_unbound): a source from TraceBuilder::AddSource and the event's byte
// in it, packed in 8 bytes (every pending event carries one: 24 bits of
// source, 40 of byte, 1 TiB). None (the default, or past those) says only
// the event's time.
class SourcePlace {
 public:
  SourcePlace() = default;
  SourcePlace(uint32_t source, uint64_t byte)
      : packed_(source < kMaxSource && byte < (uint64_t{1} << 40) ? uint64_t{source} << 40 | byte : kNone) {}
  bool known() const { return packed_ != kNone; }
  uint32_t source() const { return static_cast<uint32_t>(packed_ >> 40); }
  uint64_t byte() const { return packed_ & ((uint64_t{1} << 40) - 1); }

 private:
  static constexpr uint32_t kMaxSource = (1u << 24) - 1;
  static constexpr uint64_t kNone = ~uint64_t{0};
  uint64_t packed_ = kNone;
};

class TraceBuilder {
 public:
  explicit TraceBuilder(Trace* trace);
  ~TraceBuilder() { FlushBudget(); }
  TraceBuilder(const TraceBuilder&) = delete;
  TraceBuilder& operator=(const TraceBuilder&) = delete;

  StringId Intern(std::string_view s) { return trace_->strings.Intern(s); }
  Trace* trace() { return trace_; }

  // Track for (pid, tid); created on first use.
  uint32_t ThreadTrack(IdValue pid, IdValue tid);
  // A thread track of its own even when another has the same (pid, tid):
  // for recorders that tell apart threads whose ids the OS reused.
  uint32_t NewThreadTrack(IdValue pid, IdValue tid) { return NewTrack(TrackKind::kThread, pid, tid); }
  // Counter track named `name` in process `pid`.
  uint32_t CounterTrack(IdValue pid, StringId name, int32_t device);
  // Metadata: names apply to every track of the process / that thread.
  void SetProcessName(IdValue pid, StringId name);
  // The SetProcessName calls so far, in order, from the `first`-th on
  // (importers that classify processes by name before Finalize).
  size_t process_name_count() const { return process_names_.size(); }
  std::vector<std::pair<IdValue, StringId>> ProcessNamesSince(size_t first) const;
  void SetThreadName(uint32_t track, StringId name) { trace_->tracks.name[track] = name; }
  // Fixes a track's kind and layer so Finalize() does not infer them.
  void SetTrackRole(uint32_t track, TrackKind kind, Layer layer, int32_t device);
  void SetTrackRank(uint32_t track, int32_t rank) { trace_->tracks.rank[track] = rank; }

  // Args: append with AddArg, then pass [begin, count) to the event.
  uint64_t ArgCursor() const { return trace_->args.size(); }
  void AddArg(const Arg& arg) { trace_->args.push_back(arg); }

  // Returns the slice's index in insertion order (kNoSlice when its times
  // are out of range and it was skipped).
  uint32_t AddSlice(uint32_t track, int64_t ts_ns, int64_t dur_ns, StringId name, StringId category,
                int64_t correlation, uint64_t arg_begin, uint16_t arg_count);
  // Registers a file (its path) that B/E and flow events name; returns its index.
  uint32_t AddSource(std::string path);
  void AddBegin(uint32_t track, int64_t ts_ns, StringId name, StringId category, uint64_t arg_begin, uint16_t arg_count,
                SourcePlace place = SourcePlace());
  // `name`: the E event's own name if it has one (checked against the B it
  // closes: end_name_mismatch); empty otherwise.
  void AddEnd(uint32_t track, int64_t ts_ns, StringId name = {}, SourcePlace place = SourcePlace());
  void AddInstant(uint32_t track, int64_t ts_ns, StringId name, StringId category, char scope,
                  uint64_t arg_begin, uint16_t arg_count);
  void AddCounter(uint32_t track, int64_t ts_ns, double value);
  // Replaces the category of slice `slice` (an index in insertion order, so
  // before Finalize); for formats whose category lives in an arg.
  void SetSliceCategory(uint32_t slice, StringId category) { trace_->slices.category[slice] = category; }
  // A per-op figure. `slice` is kNoSlice, or a slice index after Finalize()
  // (Finalize reorders slices, so joins to slices happen after it).
  void AddOpMetric(uint32_t slice, int32_t rank, StringId source, StringId op, StringId key, double value,
                   StringId text);
  // One (rank, step, key) value of a step breakdown written by a profiler.
  void AddStepBreakdown(int32_t rank, int64_t step, StringId source, StringId key, int64_t value_ns);
  // The call site (parent, frame, module) of the callsite tree, added on
  // first use; parent is kNoCallsite for a root frame.
  uint32_t InternCallsite(uint32_t parent, StringId frame, StringId module, FrameKind kind);
  // One stack sample of thread track `track`; `callsite` is its leaf frame.
  void AddStackSample(uint32_t track, int64_t ts_ns, uint32_t callsite, int64_t weight_ns);
  // A flow between two slices named by their AddSlice indices (insertion
  // order); Finalize adds it, at the slices' final places, after the flows
  // it links itself. Either index kNoSlice: nothing is added.
  void AddSliceFlow(uint32_t from_slice, uint32_t to_slice, uint64_t id, StringId category) {
    if (from_slice != kNoSlice && to_slice != kNoSlice) slice_flows_.push_back({from_slice, to_slice, id, category});
  }
  // One end of a flow: phase 's' (start), 't' (step) or 'f' (finish).
  void AddFlowEvent(uint64_t id, char phase, uint32_t track, int64_t ts_ns, bool bind_enclosing, StringId category,
                    SourcePlace place = SourcePlace());

  // Offset added to every timestamp at Finalize (Kineto's baseTimeNanoseconds).
  void SetTimeBaseNs(int64_t base_ns) { time_base_ns_ = base_ns; }
  // Rank for every track that has none (Kineto's distributedInfo).
  void SetDefaultRank(int32_t rank) { default_rank_ = rank; }

  // Counts a malformed record; see Diagnostics.
  void Diagnose(const std::string& kind, const std::string& where, const std::string& what) {
    trace_->diagnostics.Add(kind, where, what);
  }
  // Counts slice_partial_overlap: `inner` starts inside `outer` and ends after it.
  // `inner_end` is the inner slice's end as written (slice_end_rounded cuts it).
  void DiagnosePartialOverlap(const std::string& kind, uint32_t outer, uint32_t inner, int64_t inner_end);
  static bool WithinMicrosecondRounding(int64_t outer_ts, int64_t outer_end, int64_t inner_ts, int64_t inner_end);

  Status Finalize();

 private:
  struct TrackKey {
    bool pid_is_string, tid_is_string;
    int64_t pid, tid;
    bool operator==(const TrackKey&) const = default;
  };
  struct TrackKeyHash {
    size_t operator()(const TrackKey& k) const;
  };
  struct CallsiteKey {
    uint32_t parent;
    uint32_t frame, module;
    FrameKind kind;
    bool operator==(const CallsiteKey&) const = default;
  };
  struct CallsiteKeyHash {
    size_t operator()(const CallsiteKey& k) const;
  };
  // Fields ordered so the place costs no padding: 48 bytes, as before it.
  struct PendingBeginEnd {
    int64_t ts_ns;
    uint32_t track;
    uint32_t seq;
    StringId name, category;
    uint64_t arg_begin;
    SourcePlace place;
    uint16_t arg_count;
    bool is_begin;
  };
  struct PendingSliceFlow {
    uint32_t from, to;
    uint64_t id;
    StringId category;
  };
  struct PendingFlow {
    uint64_t id;
    int64_t ts_ns;
    uint32_t track;
    StringId category;
    SourcePlace place;
    char phase;
    bool bind_enclosing;
  };

  uint32_t NewTrack(TrackKind kind, IdValue pid, IdValue tid);
  void ApplyTimeBase();
  void MatchBeginEnd();
  std::string PlaceOf(SourcePlace place, int64_t ts_ns, const char* event) const;
  void SortSlices();
  void ComputeDepthAndKinds();
  void ApplyProcessNames();
  void KeepWideDevicePidsApart(const std::vector<uint32_t>& tracks);
  void InferTracks();
  void LinkCorrelationFlows();
  void LinkFlowEvents();
  void LinkSliceFlows();
  void StartFlowsFirst();
  void ExtractSteps();
  void SortSamples();
  std::vector<uint32_t> BindFlowEvents() const;

  Trace* trace_;
  // The import budget of the thread that made the builder (serve's
  // conversions): every event added counts into it, a batch at a time (one
  // add to the shared atomic per kBudgetBatch events, not one per event;
  // the reads that check the limit see it at most a batch late, and the
  // rest is added at Finalize or destruction).
  ImportBudget* budget_ = nullptr;
  static constexpr uint32_t kBudgetBatch = 4096;
  uint32_t uncounted_ = 0;
  void CountEvent() {
    if (budget_ != nullptr && ++uncounted_ == kBudgetBatch) FlushBudget();
  }
  void FlushBudget();
  // AddSlice without counting the event: a B/E pair becomes a slice at
  // Finalize, its begin counted already.
  uint32_t AppendSlice(uint32_t track, int64_t ts_ns, int64_t dur_ns, StringId name, StringId category,
                       int64_t correlation, uint64_t arg_begin, uint16_t arg_count);
  std::unordered_map<TrackKey, uint32_t, TrackKeyHash> thread_tracks_;
  std::unordered_map<TrackKey, uint32_t, TrackKeyHash> counter_tracks_;
  std::unordered_map<CallsiteKey, uint32_t, CallsiteKeyHash> callsites_;
  TrackKey last_key_{};
  uint32_t last_track_ = kNoTrack;
  std::vector<std::pair<TrackKey, StringId>> process_names_;
  std::vector<bool> role_fixed_;
  std::vector<PendingBeginEnd> begin_end_;
  std::vector<std::string> sources_;  // AddSource's paths
  std::vector<PendingFlow> flow_events_;
  std::vector<PendingSliceFlow> slice_flows_;
  std::vector<uint32_t> slice_position_;  // after SortSlices, when slice_flows_: insertion index -> final index
  std::vector<uint32_t> track_slice_begin_;  // after SortSlices: per track, first slice
  int64_t time_base_ns_ = 0;
  int32_t default_rank_ = kNoRank;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_TRACE_BUILDER_H_
