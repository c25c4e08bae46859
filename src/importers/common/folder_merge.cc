#include "src/importers/common/folder_merge.h"

#include <string>

namespace aiprof {
namespace {

class PartMerger {
 public:
  PartMerger(Trace* out, const Trace& in) : out_(out), in_(in) {
    strings_.resize(in.strings.size());
    for (size_t i = 0; i < in.strings.size(); ++i) strings_[i] = out->strings.Intern(in.strings.Get(StringId{uint32_t(i)}));
    track_base_ = static_cast<uint32_t>(out->tracks.size());
    slice_base_ = static_cast<uint32_t>(out->slices.size());
    arg_base_ = out->args.size();
  }

  void Run() {
    Tracks();
    Args();
    Slices();
    Instants();
    Counters();
    Flows();
    Steps();
    OpMetrics();
    StepBreakdown();
  }

 private:
  StringId S(StringId id) const { return strings_[id.raw]; }

  void Tracks() {
    const TrackTable& a = in_.tracks;
    TrackTable& b = out_->tracks;
    for (size_t i = 0; i < a.size(); ++i) {
      b.kind.push_back(a.kind[i]);
      b.layer.push_back(a.layer[i]);
      b.pid.push_back(a.pid[i]);
      b.tid.push_back(a.tid[i]);
      b.pid_label.push_back(S(a.pid_label[i]));
      b.tid_label.push_back(S(a.tid_label[i]));
      b.name.push_back(S(a.name[i]));
      b.process_name.push_back(S(a.process_name[i]));
      b.rank.push_back(a.rank[i]);
      b.device.push_back(a.device[i]);
    }
  }

  void Args() {
    for (size_t i = 0; i < in_.args.size(); ++i) {
      Arg arg = in_.args[i];
      arg.key = S(arg.key);
      if (arg.type == ArgType::kString || arg.type == ArgType::kJson) arg.str = S(StringId{arg.str}).raw;
      out_->args.push_back(arg);
    }
  }

  void Slices() {
    const SliceTable& a = in_.slices;
    SliceTable& b = out_->slices;
    for (size_t i = 0; i < a.size(); ++i) {
      b.ts_ns.push_back(a.ts_ns[i]);
      b.dur_ns.push_back(a.dur_ns[i]);
      b.name.push_back(S(a.name[i]));
      b.category.push_back(S(a.category[i]));
      b.kind.push_back(a.kind[i]);
      b.track.push_back(a.track[i] + track_base_);
      b.depth.push_back(a.depth[i]);
      b.correlation.push_back(a.correlation[i]);
      b.arg_begin.push_back(a.arg_begin[i] + arg_base_);
      b.arg_count.push_back(a.arg_count[i]);
    }
  }

  void Instants() {
    const InstantTable& a = in_.instants;
    InstantTable& b = out_->instants;
    for (size_t i = 0; i < a.size(); ++i) {
      b.ts_ns.push_back(a.ts_ns[i]);
      b.name.push_back(S(a.name[i]));
      b.category.push_back(S(a.category[i]));
      b.track.push_back(a.track[i] + track_base_);
      b.scope.push_back(a.scope[i]);
      b.arg_begin.push_back(a.arg_begin[i] + arg_base_);
      b.arg_count.push_back(a.arg_count[i]);
    }
  }

  void Counters() {
    const CounterTable& a = in_.counters;
    for (size_t i = 0; i < a.size(); ++i) {
      out_->counters.ts_ns.push_back(a.ts_ns[i]);
      out_->counters.track.push_back(a.track[i] + track_base_);
      out_->counters.value.push_back(a.value[i]);
    }
  }

  void Flows() {
    const FlowTable& a = in_.flows;
    for (size_t i = 0; i < a.size(); ++i) {
      out_->flows.from_slice.push_back(a.from_slice[i] + slice_base_);
      out_->flows.to_slice.push_back(a.to_slice[i] + slice_base_);
      out_->flows.flow_id.push_back(a.flow_id[i]);
      out_->flows.category.push_back(S(a.category[i]));
    }
  }

  void Steps() {
    const StepTable& a = in_.steps;
    StepTable& b = out_->steps;
    for (size_t i = 0; i < a.size(); ++i) {
      b.name.push_back(S(a.name[i]));
      b.number.push_back(a.number[i]);
      b.ts_ns.push_back(a.ts_ns[i]);
      b.dur_ns.push_back(a.dur_ns[i]);
      b.track.push_back(a.track[i] + track_base_);
      b.rank.push_back(a.rank[i]);
    }
  }

  void OpMetrics() {
    const OpMetricTable& a = in_.op_metrics;
    OpMetricTable& b = out_->op_metrics;
    for (size_t i = 0; i < a.size(); ++i) {
      b.slice.push_back(a.slice[i] == kNoSlice ? kNoSlice : a.slice[i] + slice_base_);
      b.rank.push_back(a.rank[i]);
      b.source.push_back(S(a.source[i]));
      b.op.push_back(S(a.op[i]));
      b.key.push_back(S(a.key[i]));
      b.value.push_back(a.value[i]);
      b.text.push_back(S(a.text[i]));
    }
  }

  void StepBreakdown() {
    const StepBreakdownTable& a = in_.step_breakdown;
    StepBreakdownTable& b = out_->step_breakdown;
    for (size_t i = 0; i < a.size(); ++i) {
      b.rank.push_back(a.rank[i]);
      b.step.push_back(a.step[i]);
      b.source.push_back(S(a.source[i]));
      b.key.push_back(S(a.key[i]));
      b.value_ns.push_back(a.value_ns[i]);
    }
  }

  Trace* out_;
  const Trace& in_;
  std::vector<StringId> strings_;
  uint32_t track_base_;
  uint32_t slice_base_;
  uint64_t arg_base_;
};

std::string PartPrefix(const Trace& part, size_t index) {
  auto it = part.metadata.find("rank");
  return it != part.metadata.end() ? "rank" + it->second + "." : "part" + std::to_string(index) + ".";
}

}  // namespace

std::unique_ptr<Trace> MergeTraces(std::vector<std::unique_ptr<Trace>> parts) {
  auto out = std::make_unique<Trace>();
  for (size_t p = 0; p < parts.size(); ++p) {
    PartMerger(out.get(), *parts[p]).Run();
    std::string prefix = PartPrefix(*parts[p], p);
    for (const auto& [key, value] : parts[p]->metadata) out->metadata[prefix + key] = value;
    for (const auto& [kind, e] : parts[p]->diagnostics.entries()) {
      DiagnosticEntry& d = out->diagnostics.mutable_entries()[kind];
      if (d.count == 0) {
        d.first_where = e.first_where;
        d.description = e.description;
      }
      d.count += e.count;
    }
    parts[p].reset();  // free each part once merged
  }
  return out;
}

}  // namespace aiprof
