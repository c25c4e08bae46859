#include "src/view/export/perfetto_export.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "src/view/export/perfetto_trace_subset.pb.h"

namespace aiprof {
namespace {

namespace pb = perfetto::protos;

constexpr uint32_t kSequenceId = 1;

bool IsDeviceTrackRow(const TrackTable& t, size_t i) {
  return t.kind[i] == TrackKind::kDeviceStream || t.device[i] != kHostDevice;
}

// One process or device of one rank: the parent of its threads and streams.
struct Group {
  int32_t rank = kNoRank;
  int64_t pid = 0;
  StringId pid_label;
  uint64_t uuid = 0;
  bool device = false;
  StringId process_name;
  bool use_process_descriptor = false;
};

// Where the events of one model track go.
struct TrackPlan {
  size_t group = 0;
  uint64_t uuid = 0;
  bool thread_descriptor = false;
  std::vector<uint64_t> overlap_lanes;  // uuids of sibling tracks 1, 2, ...
};

class PerfettoWriter {
 public:
  PerfettoWriter(const Trace& trace, ViewSink* out, PerfettoExportStats* stats, const CriticalPathResult* path)
      : trace_(trace), out_(out), stats_(stats),
        name_sent_(trace.strings.size(), false), category_sent_(trace.strings.size(), false),
        arg_name_sent_(trace.strings.size(), false), arg_value_sent_(trace.strings.size(), false), path_(path) {}

  Status Run() {
    ComputeShift();
    PlanTracks();
    RETURN_IF_ERROR(WriteHeader());
    RETURN_IF_ERROR(WriteDescriptors());
    RETURN_IF_ERROR(WriteSlices());
    RETURN_IF_ERROR(WriteInstants());
    RETURN_IF_ERROR(WriteCounters());
    RETURN_IF_ERROR(WriteSamples());
    return Flush();
  }

 private:
  // ---- timestamps
  void ComputeShift() {
    int64_t min_ts = 0;
    for (size_t i = 0; i < trace_.slices.size(); ++i) min_ts = std::min(min_ts, trace_.slices.ts_ns[i]);
    for (size_t i = 0; i < trace_.instants.size(); ++i) min_ts = std::min(min_ts, trace_.instants.ts_ns[i]);
    for (size_t i = 0; i < trace_.counters.size(); ++i) min_ts = std::min(min_ts, trace_.counters.ts_ns[i]);
    for (size_t i = 0; i < trace_.samples.size(); ++i) min_ts = std::min(min_ts, trace_.samples.ts_ns[i]);
    stats_->shift_ns = -min_ts;
  }
  uint64_t Ts(int64_t ts_ns) const { return static_cast<uint64_t>(ts_ns + stats_->shift_ns); }

  // ---- track tree
  void PlanTracks() {
    const TrackTable& t = trace_.tracks;
    std::map<int32_t, uint64_t> ranks;
    for (size_t i = 0; i < t.size(); ++i) ranks.emplace(t.rank[i], 0);
    multi_rank_ = ranks.size() > 1;
    if (multi_rank_) {
      for (auto& [rank, uuid] : ranks) uuid = NextUuid();
      rank_uuids_ = ranks;
    }
    std::map<std::tuple<int32_t, int64_t, uint32_t>, size_t> group_index;
    plans_.resize(t.size());
    for (size_t i = 0; i < t.size(); ++i) {
      auto key = std::make_tuple(t.rank[i], t.pid[i], t.pid_label[i].raw);
      auto [it, inserted] = group_index.emplace(key, groups_.size());
      if (inserted) {
        Group g;
        g.rank = t.rank[i];
        g.pid = t.pid[i];
        g.pid_label = t.pid_label[i];
        g.uuid = NextUuid();
        groups_.push_back(g);
      }
      Group& g = groups_[it->second];
      // A counter with a device index (PyTorch's per-device memory) sits in
      // its process; it does not make the process a device, which would cost
      // the process and its threads their descriptors.
      g.device = g.device || (t.kind[i] != TrackKind::kCounter && IsDeviceTrackRow(t, i));
      if (g.process_name.empty()) g.process_name = t.process_name[i];
      plans_[i].group = it->second;
      plans_[i].uuid = NextUuid();
    }
    for (Group& g : groups_) {
      g.use_process_descriptor = !multi_rank_ && !g.device && g.pid_label.empty() &&
                                 g.pid >= std::numeric_limits<int32_t>::min() &&
                                 g.pid <= std::numeric_limits<int32_t>::max();
    }
    for (size_t i = 0; i < t.size(); ++i) {
      plans_[i].thread_descriptor = groups_[plans_[i].group].use_process_descriptor &&
                                    t.kind[i] == TrackKind::kThread && t.tid_label[i].empty();
    }
  }

  uint64_t NextUuid() { return next_uuid_++; }

  std::string GroupName(const Group& g) const {
    if (!g.process_name.empty()) return std::string(trace_.Str(g.process_name));
    if (!g.pid_label.empty()) return std::string(trace_.Str(g.pid_label));
    return (g.device ? "device " : "process ") + std::to_string(g.pid);
  }

  std::string TrackName(size_t i) const {
    const TrackTable& t = trace_.tracks;
    if (!t.name[i].empty()) return std::string(trace_.Str(t.name[i]));
    std::string tid = t.tid_label[i].empty() ? std::to_string(t.tid[i]) : std::string(trace_.Str(t.tid_label[i]));
    switch (t.kind[i]) {
      case TrackKind::kThread: return "thread " + tid;
      case TrackKind::kDeviceStream: return "stream " + tid;
      case TrackKind::kCounter: return "counter " + tid;
      case TrackKind::kSpans: return "spans " + tid;
    }
    return "track " + tid;
  }

  Status WriteHeader() {
    packet_.Clear();
    packet_.set_timestamp(0);
    packet_.set_trusted_packet_sequence_id(kSequenceId);
    packet_.set_first_packet_on_sequence(true);
    packet_.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    packet_.mutable_trace_packet_defaults()->set_timestamp_clock_id(kPerfettoTraceClockId);
    pb::ClockSnapshot* clocks = packet_.mutable_clock_snapshot();
    clocks->set_primary_trace_clock(pb::BUILTIN_CLOCK_BOOTTIME);
    pb::ClockSnapshot::Clock* clock = clocks->add_clocks();
    clock->set_clock_id(kPerfettoTraceClockId);
    clock->set_timestamp(0);
    return Emit();
  }

  Status WriteDescriptors() {
    for (const auto& [rank, uuid] : rank_uuids_) {
      pb::TrackDescriptor* d = NewDescriptor(uuid);
      d->set_name(rank == kNoRank ? "rank unknown" : "rank " + std::to_string(rank));
      d->set_sibling_order_rank(rank);
      RETURN_IF_ERROR(Emit());
    }
    for (const Group& g : groups_) {
      pb::TrackDescriptor* d = NewDescriptor(g.uuid);
      if (g.use_process_descriptor) {
        pb::ProcessDescriptor* p = d->mutable_process();
        p->set_pid(static_cast<int32_t>(g.pid));
        p->set_process_name(GroupName(g));
      } else {
        d->set_name(GroupName(g));
        if (multi_rank_) d->set_parent_uuid(rank_uuids_.at(g.rank));
      }
      d->set_child_ordering(pb::TrackDescriptor::EXPLICIT);
      RETURN_IF_ERROR(Emit());
    }
    const TrackTable& t = trace_.tracks;
    for (size_t i = 0; i < t.size(); ++i) {
      const TrackPlan& plan = plans_[i];
      const Group& g = groups_[plan.group];
      pb::TrackDescriptor* d = NewDescriptor(plan.uuid);
      if (plan.thread_descriptor) {
        pb::ThreadDescriptor* th = d->mutable_thread();
        th->set_pid(static_cast<int32_t>(g.pid));
        th->set_tid(t.tid[i]);
        th->set_thread_name(TrackName(i));
      } else {
        d->set_name(TrackName(i));
        d->set_parent_uuid(g.uuid);
      }
      d->set_description(std::string("layer: ") + LayerName(t.layer[i]));
      d->set_sibling_order_rank(SiblingRank(i, 0));
      if (t.kind[i] == TrackKind::kCounter) d->mutable_counter();
      RETURN_IF_ERROR(Emit());
    }
    return OkStatus();
  }

  // Children of a process or device are ordered by layer, then track, then lane.
  int32_t SiblingRank(size_t track, size_t lane) const {
    return static_cast<int32_t>(static_cast<uint32_t>(trace_.tracks.layer[track]) * 1000000u +
                                std::min<size_t>(track, 9999) * 100u + std::min<size_t>(lane, 99));
  }

  pb::TrackDescriptor* NewDescriptor(uint64_t uuid) {
    packet_.Clear();
    packet_.set_trusted_packet_sequence_id(kSequenceId);
    pb::TrackDescriptor* d = packet_.mutable_track_descriptor();
    d->set_uuid(uuid);
    ++stats_->track_descriptors;
    return d;
  }

  // The uuid of lane `lane` of model track `track`; lanes above 0 are sibling
  // tracks, described the first time they are needed.
  StatusOr<uint64_t> LaneUuid(size_t track, size_t lane) {
    TrackPlan& plan = plans_[track];
    if (lane == 0) return plan.uuid;
    while (plan.overlap_lanes.size() < lane) {
      uint64_t uuid = NextUuid();
      size_t k = plan.overlap_lanes.size() + 1;
      pb::TrackDescriptor* d = NewDescriptor(uuid);
      d->set_name(TrackName(track) + " (overlap " + std::to_string(k) + ")");
      d->set_parent_uuid(groups_[plan.group].uuid);
      d->set_description("slices that overlap others on their track without nesting");
      d->set_sibling_order_rank(SiblingRank(track, k));
      RETURN_IF_ERROR(Emit());
      plan.overlap_lanes.push_back(uuid);
      ++stats_->overlap_tracks;
    }
    return plan.overlap_lanes[lane - 1];
  }

  // ---- events
  pb::TrackEvent* NewEvent(uint64_t ts, uint64_t track_uuid, pb::TrackEvent::Type type) {
    packet_.Clear();
    packet_.set_timestamp(ts);
    packet_.set_trusted_packet_sequence_id(kSequenceId);
    packet_.set_sequence_flags(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    pb::TrackEvent* e = packet_.mutable_track_event();
    e->set_type(type);
    e->set_track_uuid(track_uuid);
    return e;
  }

  void SetNameAndCategory(pb::TrackEvent* e, StringId name, StringId category) {
    e->set_name_iid(name.raw + 1);
    if (!name_sent_[name.raw]) {
      name_sent_[name.raw] = true;
      pb::EventName* n = packet_.mutable_interned_data()->add_event_names();
      n->set_iid(name.raw + 1);
      n->set_name(std::string(trace_.Str(name)));
    }
    if (category.empty()) return;
    e->add_category_iids(category.raw + 1);
    if (!category_sent_[category.raw]) {
      category_sent_[category.raw] = true;
      pb::EventCategory* c = packet_.mutable_interned_data()->add_event_categories();
      c->set_iid(category.raw + 1);
      c->set_name(std::string(trace_.Str(category)));
    }
  }

  void AddArgs(pb::TrackEvent* e, uint64_t begin, uint16_t count) {
    for (uint64_t a = begin; a < begin + count; ++a) {
      const Arg& arg = trace_.args[a];
      pb::DebugAnnotation* d = e->add_debug_annotations();
      d->set_name_iid(arg.key.raw + 1);
      if (!arg_name_sent_[arg.key.raw]) {
        arg_name_sent_[arg.key.raw] = true;
        pb::DebugAnnotationName* n = packet_.mutable_interned_data()->add_debug_annotation_names();
        n->set_iid(arg.key.raw + 1);
        n->set_name(std::string(trace_.Str(arg.key)));
      }
      switch (arg.type) {
        case ArgType::kInt: d->set_int_value(arg.i); break;
        case ArgType::kUint: d->set_uint_value(arg.u); break;
        case ArgType::kDouble: d->set_double_value(arg.d); break;
        case ArgType::kString: {
          // Arg strings repeat (shapes, call stacks): interned like names.
          const uint32_t raw = arg.str;
          d->set_string_value_iid(uint64_t{raw} + 1);
          if (!arg_value_sent_[raw]) {
            arg_value_sent_[raw] = true;
            pb::InternedString* v = packet_.mutable_interned_data()->add_debug_annotation_string_values();
            v->set_iid(uint64_t{raw} + 1);
            v->set_str(std::string(trace_.Str(StringId{raw})));
          }
          break;
        }
        case ArgType::kJson: d->set_legacy_json_value(std::string(trace_.Str(StringId{arg.str}))); break;
        case ArgType::kBool: d->set_bool_value(arg.i != 0); break;
        case ArgType::kNull: d->set_legacy_json_value("null"); break;
      }
    }
  }

  // Flow rows ordered by source slice and by target slice, walked alongside
  // the slices (which are in index order), so no per-slice table is needed.
  void SortFlows() {
    const FlowTable& f = trace_.flows;
    flows_by_from_.resize(f.size());
    std::iota(flows_by_from_.begin(), flows_by_from_.end(), 0u);
    flows_by_to_ = flows_by_from_;
    std::stable_sort(flows_by_from_.begin(), flows_by_from_.end(),
                     [&](uint32_t a, uint32_t b) { return f.from_slice[a] < f.from_slice[b]; });
    std::stable_sort(flows_by_to_.begin(), flows_by_to_.end(),
                     [&](uint32_t a, uint32_t b) { return f.to_slice[a] < f.to_slice[b]; });
  }

  // The critical path's mark and flows on slice `slice` (ids after the
  // trace's flows; edges sorted once by source and by target).
  void AddCritical(pb::TrackEvent* e, uint32_t slice) {
    if (path_ == nullptr) return;
    if (slice < path_->on_path.size() && path_->on_path[slice]) {
      pb::DebugAnnotation* d = e->add_debug_annotations();
      const uint64_t iid = trace_.strings.size() + 1;  // past every string's iid
      d->set_name_iid(iid);
      if (!critical_name_sent_) {
        critical_name_sent_ = true;
        pb::DebugAnnotationName* n = packet_.mutable_interned_data()->add_debug_annotation_names();
        n->set_iid(iid);
        n->set_name("critical_path");
      }
      d->set_bool_value(true);
      ++stats_->critical_slices;
    }
    const std::vector<PathEdge>& edges = path_->edges;
    const uint64_t base = trace_.flows.size() + 1;
    while (crit_from_ < crit_by_from_.size() && edges[crit_by_from_[crit_from_]].from_slice < slice) ++crit_from_;
    while (crit_to_ < crit_by_to_.size() && edges[crit_by_to_[crit_to_]].to_slice < slice) ++crit_to_;
    for (; crit_from_ < crit_by_from_.size() && edges[crit_by_from_[crit_from_]].from_slice == slice; ++crit_from_) {
      e->add_flow_ids(base + crit_by_from_[crit_from_]);
      ++stats_->critical_flows;
    }
    for (; crit_to_ < crit_by_to_.size() && edges[crit_by_to_[crit_to_]].to_slice == slice; ++crit_to_) {
      e->add_terminating_flow_ids(base + crit_by_to_[crit_to_]);
    }
  }

  void SortCriticalEdges() {
    if (path_ == nullptr) return;
    const std::vector<PathEdge>& edges = path_->edges;
    crit_by_from_.resize(edges.size());
    std::iota(crit_by_from_.begin(), crit_by_from_.end(), 0u);
    crit_by_to_ = crit_by_from_;
    std::stable_sort(crit_by_from_.begin(), crit_by_from_.end(),
                     [&](uint32_t a, uint32_t b) { return edges[a].from_slice < edges[b].from_slice; });
    std::stable_sort(crit_by_to_.begin(), crit_by_to_.end(),
                     [&](uint32_t a, uint32_t b) { return edges[a].to_slice < edges[b].to_slice; });
  }

  void AddFlows(pb::TrackEvent* e, uint32_t slice) {
    AddCritical(e, slice);
    const FlowTable& f = trace_.flows;
    while (from_cursor_ < flows_by_from_.size() && f.from_slice[flows_by_from_[from_cursor_]] < slice) ++from_cursor_;
    while (to_cursor_ < flows_by_to_.size() && f.to_slice[flows_by_to_[to_cursor_]] < slice) ++to_cursor_;
    for (; from_cursor_ < flows_by_from_.size() && f.from_slice[flows_by_from_[from_cursor_]] == slice; ++from_cursor_) {
      e->add_flow_ids(uint64_t{flows_by_from_[from_cursor_]} + 1);
      ++stats_->flows;
    }
    for (; to_cursor_ < flows_by_to_.size() && f.to_slice[flows_by_to_[to_cursor_]] == slice; ++to_cursor_) {
      e->add_terminating_flow_ids(uint64_t{flows_by_to_[to_cursor_]} + 1);
    }
  }

  struct Open {
    int64_t end_ns;
  };

  // Slices of one track are contiguous and ordered by (start, longest
  // first): a stack per lane sees them nest. A slice goes to the first lane
  // whose open slice contains it (or that has none open).
  Status WriteSlices() {
    SortFlows();
    SortCriticalEdges();
    const SliceTable& s = trace_.slices;
    std::vector<std::vector<Open>> lanes;
    uint32_t current = kNoTrack;
    for (size_t i = 0; i < s.size(); ++i) {
      uint32_t track = s.track[i];
      if (track != current) {
        RETURN_IF_ERROR(CloseLanes(current, &lanes, std::numeric_limits<int64_t>::max()));
        lanes.clear();
        current = track;
      }
      const int64_t start = s.ts_ns[i], end = start + s.dur_ns[i];
      RETURN_IF_ERROR(CloseLanes(track, &lanes, start));
      size_t lane = 0;
      while (lane < lanes.size() && !lanes[lane].empty() && lanes[lane].back().end_ns < end) ++lane;
      if (lane == lanes.size()) lanes.emplace_back();
      ASSIGN_OR_RETURN(uint64_t uuid, LaneUuid(track, lane));
      pb::TrackEvent* e = NewEvent(Ts(start), uuid, pb::TrackEvent::TYPE_SLICE_BEGIN);
      SetNameAndCategory(e, s.name[i], s.category[i]);
      AddArgs(e, s.arg_begin[i], s.arg_count[i]);
      AddFlows(e, static_cast<uint32_t>(i));
      RETURN_IF_ERROR(Emit());
      lanes[lane].push_back(Open{end});
      ++stats_->slices;
    }
    return CloseLanes(current, &lanes, std::numeric_limits<int64_t>::max());
  }

  // Ends every open slice that ends at or before `ts_ns`, innermost first.
  Status CloseLanes(uint32_t track, std::vector<std::vector<Open>>* lanes, int64_t ts_ns) {
    for (size_t lane = 0; lane < lanes->size(); ++lane) {
      std::vector<Open>& open = (*lanes)[lane];
      while (!open.empty() && open.back().end_ns <= ts_ns) {
        ASSIGN_OR_RETURN(uint64_t uuid, LaneUuid(track, lane));
        NewEvent(Ts(open.back().end_ns), uuid, pb::TrackEvent::TYPE_SLICE_END);
        RETURN_IF_ERROR(Emit());
        open.pop_back();
      }
    }
    return OkStatus();
  }

  Status WriteInstants() {
    const InstantTable& in = trace_.instants;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in.track[i] >= plans_.size()) continue;
      pb::TrackEvent* e = NewEvent(Ts(in.ts_ns[i]), plans_[in.track[i]].uuid, pb::TrackEvent::TYPE_INSTANT);
      SetNameAndCategory(e, in.name[i], in.category[i]);
      AddArgs(e, in.arg_begin[i], in.arg_count[i]);
      RETURN_IF_ERROR(Emit());
      ++stats_->instants;
    }
    return OkStatus();
  }

  Status WriteCounters() {
    const CounterTable& c = trace_.counters;
    for (size_t i = 0; i < c.size(); ++i) {
      uint32_t track = c.track[i];
      if (track >= plans_.size() || trace_.tracks.kind[track] != TrackKind::kCounter) {
        ++stats_->skipped_counters;
        continue;
      }
      pb::TrackEvent* e = NewEvent(Ts(c.ts_ns[i]), plans_[track].uuid, pb::TrackEvent::TYPE_COUNTER);
      e->set_double_counter_value(c.value[i]);
      RETURN_IF_ERROR(Emit());
      ++stats_->counter_values;
    }
    return OkStatus();
  }

  // ---- bytes: each packet is field 1 (length-delimited) of Trace.
  Status Emit() {
    const size_t n = packet_.ByteSizeLong();
    buffer_.push_back('\x0a');
    for (uint64_t v = n; ; v >>= 7) {
      if (v < 0x80) {
        buffer_.push_back(static_cast<char>(v));
        break;
      }
      buffer_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    }
    const size_t at = buffer_.size();
    buffer_.resize(at + n);
    packet_.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(buffer_.data() + at));
    ++stats_->packets;
    return buffer_.size() >= kViewFlushBytes ? Flush() : OkStatus();
  }

  // ---- CPU stack samples: one PerfSample per sample (pid and tid of its
  // thread; a label-named one has 0), its callstack interned on first use with
  // its frames (function name, module as mapping), outermost frame first.
  Status WriteSamples() {
    const StackSampleTable& s = trace_.samples;
    const TrackTable& t = trace_.tracks;
    for (size_t i = 0; i < s.size(); ++i) {
      packet_.Clear();
      packet_.set_timestamp(Ts(s.ts_ns[i]));
      packet_.set_trusted_packet_sequence_id(kSequenceId);
      packet_.set_sequence_flags(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
      pb::PerfSample* p = packet_.mutable_perf_sample();
      const uint32_t track = s.track[i];
      p->set_cpu(0);
      p->set_pid(t.pid_label[track].empty() ? static_cast<uint32_t>(t.pid[track]) : 0);
      p->set_tid(t.tid_label[track].empty() ? static_cast<uint32_t>(t.tid[track]) : 0);
      if (s.callsite[i] != kNoCallsite) p->set_callstack_iid(InternCallstack(s.callsite[i]));
      RETURN_IF_ERROR(Emit());
      ++stats_->samples;
    }
    return OkStatus();
  }

  uint64_t InternCallstack(uint32_t leaf) {
    const CallsiteTable& cs = trace_.callsites;
    if (callstack_sent_.empty()) callstack_sent_.assign(cs.size(), false), frame_sent_.assign(cs.size(), false);
    if (callstack_sent_[leaf]) return uint64_t{leaf} + 1;
    callstack_sent_[leaf] = true;
    std::vector<uint32_t> chain;
    for (uint32_t c = leaf; c != kNoCallsite; c = cs.parent[c]) chain.push_back(c);
    pb::InternedData* d = packet_.mutable_interned_data();
    pb::Callstack* stack = d->add_callstacks();
    stack->set_iid(uint64_t{leaf} + 1);
    for (size_t k = chain.size(); k-- > 0;) {
      const uint32_t c = chain[k];
      stack->add_frame_ids(uint64_t{c} + 1);
      if (frame_sent_[c]) continue;
      frame_sent_[c] = true;
      pb::Frame* f = d->add_frames();
      f->set_iid(uint64_t{c} + 1);
      f->set_function_name_id(InternString(cs.frame[c], &function_name_sent_, d->mutable_function_names()));
      if (!cs.module[c].empty()) {
        const uint64_t mapping = uint64_t{cs.module[c].raw} + 1;
        f->set_mapping_id(mapping);
        if (mapping_sent_.insert(mapping).second) {
          pb::Mapping* m = d->add_mappings();
          m->set_iid(mapping);
          m->add_path_string_ids(InternString(cs.module[c], &mapping_path_sent_, d->mutable_mapping_paths()));
        }
      }
    }
    return uint64_t{leaf} + 1;
  }

  uint64_t InternString(StringId id, std::vector<bool>* sent,
                        google::protobuf::RepeatedPtrField<pb::InternedString>* table) {
    if (sent->empty()) sent->assign(trace_.strings.size(), false);
    if (!(*sent)[id.raw]) {
      (*sent)[id.raw] = true;
      pb::InternedString* v = table->Add();
      v->set_iid(uint64_t{id.raw} + 1);
      v->set_str(std::string(trace_.Str(id)));
    }
    return uint64_t{id.raw} + 1;
  }

  Status Flush() {
    RETURN_IF_ERROR(out_->Append(buffer_));
    buffer_.clear();
    return OkStatus();
  }

  const Trace& trace_;
  ViewSink* out_;
  PerfettoExportStats* stats_;
  pb::TracePacket packet_;
  std::string buffer_;
  std::vector<bool> name_sent_, category_sent_, arg_name_sent_, arg_value_sent_;
  std::vector<bool> callstack_sent_, frame_sent_, function_name_sent_, mapping_path_sent_;
  std::set<uint64_t> mapping_sent_;
  bool multi_rank_ = false;
  std::map<int32_t, uint64_t> rank_uuids_;
  std::vector<Group> groups_;
  std::vector<TrackPlan> plans_;
  uint64_t next_uuid_ = 1;
  std::vector<uint32_t> flows_by_from_, flows_by_to_;
  size_t from_cursor_ = 0, to_cursor_ = 0;
  const CriticalPathResult* path_;
  std::vector<uint32_t> crit_by_from_, crit_by_to_;
  size_t crit_from_ = 0, crit_to_ = 0;
  bool critical_name_sent_ = false;
};

}  // namespace

Status ExportPerfetto(const Trace& trace, ViewSink* out, PerfettoExportStats* stats,
                      const CriticalPathResult* critical_path) {
  PerfettoExportStats local;
  PerfettoWriter writer(trace, out, stats ? stats : &local, critical_path);
  return writer.Run();
}

}  // namespace aiprof
