#include "src/view/flame/flame_speedscope.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "src/model/trace.h"
#include "src/render/escape.h"
#include "src/view/flame/flame_graph.h"
#include "src/view/view_sink.h"

namespace aiprof {
namespace {

// Streams JSON text to the sink in ~1 MiB pieces.
class Out {
 public:
  explicit Out(ViewSink* sink) : sink_(sink) {}
  std::string& buf() { return buf_; }
  Status MaybeFlush() {
    if (buf_.size() < kViewFlushBytes) return OkStatus();
    return Flush();
  }
  Status Flush() {
    Status s = sink_->Append(buf_);
    buf_.clear();
    return s;
  }

 private:
  ViewSink* sink_;
  std::string buf_;
};

// Frames shared by all profiles: one per distinct (name, module).
class Frames {
 public:
  explicit Frames(const Trace& trace) : trace_(trace), index_(trace.strings.size(), UINT32_MAX) {}
  uint32_t Of(StringId name, StringId module = StringId{}) {
    // Names and modules are both interned; a frame is keyed by its name, and
    // its module is the first seen with it (the flame graph merges the same way).
    uint32_t& slot = index_[name.raw];
    if (slot == UINT32_MAX) {
      slot = static_cast<uint32_t>(order_.size());
      order_.push_back({name, module});
    }
    return slot;
  }
  void AppendJson(std::string* out) const {
    out->append("\"shared\":{\"frames\":[");
    for (size_t i = 0; i < order_.size(); ++i) {
      if (i) out->push_back(',');
      out->append("{\"name\":\"");
      AppendJsonEscaped(out, trace_.Str(order_[i].first));
      out->push_back('"');
      if (!order_[i].second.empty()) {
        out->append(",\"file\":\"");
        AppendJsonEscaped(out, trace_.Str(order_[i].second));
        out->push_back('"');
      }
      out->push_back('}');
    }
    out->append("]}");
  }

 private:
  const Trace& trace_;
  std::vector<uint32_t> index_;
  std::vector<std::pair<StringId, StringId>> order_;
};

void BeginProfile(std::string* out, bool first, const char* type, const std::string& name) {
  if (!first) out->push_back(',');
  out->append("{\"type\":\"").append(type).append("\",\"name\":\"");
  AppendJsonEscaped(out, name);
  out->append("\",\"unit\":\"nanoseconds\",\"startValue\":0,");
}

// One evented profile per thread, from the slices' nesting (the flame
// graph's rule, AddSpanStacks: a slice's parent is the innermost open slice
// that encloses it; one that outlives the open slices it started in closes
// them at its start and is kept whole; zero-length slices left out).
// Times are ns from the earliest selected slice.
Status WriteEvented(const Trace& trace, const std::vector<bool>& selected, bool multi_rank, Frames* frames, Out* out) {
  const SliceTable& s = trace.slices;
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (selected[s.track[i]] && IsStackSlice(trace, i)) origin = std::min(origin, s.ts_ns[i]);
  }
  struct Open {
    int64_t end;
    uint32_t frame;
  };
  std::vector<Open> stack;
  std::string& b = out->buf();
  bool first_profile = true, first_event = true;
  uint32_t track = kNoTrack;
  int64_t last_end = 0;
  auto close_until = [&](int64_t ts) {
    while (!stack.empty() && stack.back().end <= ts) {
      b.append(",{\"type\":\"C\",\"frame\":").append(std::to_string(stack.back().frame));
      b.append(",\"at\":").append(std::to_string(stack.back().end - origin)).push_back('}');
      stack.pop_back();
    }
  };
  auto end_profile = [&]() {
    close_until(std::numeric_limits<int64_t>::max());
    b.append("],\"endValue\":").append(std::to_string(last_end - origin)).push_back('}');
  };
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (!selected[s.track[i]] || !IsStackSlice(trace, i)) continue;
    if (s.track[i] != track) {
      if (track != kNoTrack) end_profile();
      track = s.track[i];
      BeginProfile(&b, first_profile, "evented", ThreadLabel(trace, track, multi_rank));
      first_profile = false;
      b.append("\"events\":[");
      first_event = true;
      last_end = origin;
    }
    const int64_t ts = s.ts_ns[i], end = ts + s.dur_ns[i];
    close_until(ts);
    // Open slices it outlives are not its parent and close here (the latest
    // started slice has the time until it ends; it is kept whole).
    while (!stack.empty() && stack.back().end < end) {
      b.append(",{\"type\":\"C\",\"frame\":").append(std::to_string(stack.back().frame));
      b.append(",\"at\":").append(std::to_string(ts - origin)).push_back('}');
      stack.pop_back();
    }
    uint32_t frame = frames->Of(s.name[i]);
    if (!first_event) b.push_back(',');
    first_event = false;
    b.append("{\"type\":\"O\",\"frame\":").append(std::to_string(frame));
    b.append(",\"at\":").append(std::to_string(ts - origin)).push_back('}');
    stack.push_back({end, frame});
    last_end = std::max(last_end, end);
    RETURN_IF_ERROR(out->MaybeFlush());
  }
  if (track != kNoTrack) end_profile();
  return OkStatus();
}

// One sampled profile per thread: each sample's stack (root first) and weight.
Status WriteSampled(const Trace& trace, const std::vector<bool>& selected, bool multi_rank, Frames* frames, Out* out) {
  const StackSampleTable& s = trace.samples;
  const CallsiteTable& cs = trace.callsites;
  std::string& b = out->buf();
  std::string weights;
  std::vector<uint32_t> stack;
  uint32_t track = kNoTrack;
  bool first_profile = true, first_sample = true;
  int64_t sum = 0;
  auto end_profile = [&]() {
    b.append("],\"weights\":[").append(weights).append("],\"endValue\":").append(std::to_string(sum)).push_back('}');
    weights.clear();
    sum = 0;
  };
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.track[i] >= selected.size() || !selected[s.track[i]]) continue;
    if (s.track[i] != track) {
      if (track != kNoTrack) end_profile();
      track = s.track[i];
      BeginProfile(&b, first_profile, "sampled", ThreadLabel(trace, track, multi_rank));
      first_profile = false;
      b.append("\"samples\":[");
      first_sample = true;
    }
    stack.clear();
    for (uint32_t c = s.callsite[i]; c != kNoCallsite && c < cs.size(); c = cs.parent[c]) {
      stack.push_back(frames->Of(cs.frame[c], cs.module[c]));
    }
    if (!first_sample) {
      b.push_back(',');
      weights.push_back(',');
    }
    first_sample = false;
    b.push_back('[');
    for (size_t k = stack.size(); k-- > 0;) {
      b.append(std::to_string(stack[k]));
      if (k) b.push_back(',');
    }
    b.push_back(']');
    int64_t w = std::max<int64_t>(s.weight_ns[i], 0);
    weights.append(std::to_string(w));
    sum += w;
    RETURN_IF_ERROR(out->MaybeFlush());
  }
  if (track != kNoTrack) end_profile();
  return OkStatus();
}

}  // namespace

Status WriteSpeedscope(const Trace& trace, const ViewOptions& options, ViewSink* sink) {
  RETURN_IF_ERROR(CheckFiltersMatch(trace, options));
  std::vector<bool> selected = SelectedThreads(trace, options);
  bool multi_rank = IsMultiRank(trace);
  Frames frames(trace);
  // "profiles" before "shared" (JSON members are unordered): the profiles
  // decide the frames, and stream out as they are written.
  Out out(sink);
  out.buf() = "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"aiprof view --flame\",\"name\":\"";
  AppendJsonEscaped(&out.buf(), options.title);
  out.buf().append("\",\"activeProfileIndex\":0,\"profiles\":[");
  if (HasSamples(trace, selected)) {
    RETURN_IF_ERROR(WriteSampled(trace, selected, multi_rank, &frames, &out));
  } else {
    RETURN_IF_ERROR(WriteEvented(trace, selected, multi_rank, &frames, &out));
  }
  out.buf().append("],");
  frames.AppendJson(&out.buf());
  out.buf().append("}\n");
  return out.Flush();
}

}  // namespace aiprof
