#include "src/capture/host_trace.h"

#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "src/capture/process_image.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

// Mappings that describe `pid`'s code: its own, plus (for a child forked
// without execve) those of the processes it was forked from.
std::vector<Mapping> MappingsOf(const PerfData& perf, int32_t pid) {
  std::vector<Mapping> out;
  for (int32_t p = pid, hops = 0; hops < 64; ++hops) {
    for (const Mapping& m : perf.mappings) {
      if (m.pid == p) {
        out.push_back(m);
        out.back().pid = pid;
      }
    }
    if (perf.exec_pids.count(p)) break;
    auto it = perf.process_parent.find(p);
    if (it == perf.process_parent.end()) break;
    p = it->second;
  }
  return out;
}

FrameKind KindOf(const SymbolisedFrame& f) {
  if (f.module == "[perf-map]" && f.name.rfind("py::", 0) == 0) return FrameKind::kPython;
  return f.known || f.module != "[unknown]" ? FrameKind::kNative : FrameKind::kUnknown;
}

class HostTraceBuilder {
 public:
  HostTraceBuilder(const PerfData& perf, UnwindMode mode, TraceBuilder* builder, HostStats* stats)
      : perf_(perf), mode_(mode), b_(builder), stats_(stats) {
    kernel_frame_ = b_->Intern("[kernel]");
    kernel_module_ = b_->Intern("[kernel.kallsyms]");
  }

  void Run() {
    for (const RawSample& s : perf_.samples) AddSample(s);
    NameTracks();
    stats_->processes = images_.size();
    for (const auto& [pid, image] : images_) stats_->modules += image->module_count();
    stats_->threads = tracks_.size();
  }

 private:
  ProcessImage* Image(int32_t pid) {
    auto it = images_.find(pid);
    if (it == images_.end()) it = images_.emplace(pid, std::make_unique<ProcessImage>(pid, MappingsOf(perf_, pid))).first;
    return it->second.get();
  }

  uint32_t Track(int32_t pid, int32_t tid) {
    auto key = (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(tid);
    auto it = tracks_.find(key);
    if (it != tracks_.end()) return it->second;
    uint32_t t = b_->ThreadTrack(IdValue::Num(pid), IdValue::Num(tid));
    b_->SetTrackRole(t, TrackKind::kThread, Layer::kHost, kHostDevice);
    tracks_.emplace(key, t);
    return t;
  }

  void AddSample(const RawSample& s) {
    ProcessImage* image = Image(s.pid);
    pcs_.clear();
    bool dwarf = false;
    if (mode_ != UnwindMode::kFramePointer && s.regs_index != UINT32_MAX && s.stack_len > 0) {
      image->UnwindDwarf(s.tid, &perf_.regs[static_cast<size_t>(s.regs_index) * kDwarfRegs],
                         perf_.stack.data() + s.stack_begin, s.stack_len, &pcs_);
      // auto: the chain with more frames in known code (a frame-pointer walk
      // through code without frame pointers follows stack garbage).
      dwarf = mode_ == UnwindMode::kDwarf || image->CountInModules(pcs_.data(), pcs_.size()) >=
                                                 image->CountInModules(&perf_.chain[s.chain_begin], s.chain_len);
    }
    if (!dwarf) pcs_.assign(perf_.chain.begin() + s.chain_begin, perf_.chain.begin() + s.chain_begin + s.chain_len);
    ++(dwarf ? stats_->dwarf_stacks : stats_->fp_stacks);
    // Root first: the outermost caller is the last pc.
    uint32_t parent = kNoCallsite;
    for (size_t i = pcs_.size(); i-- > 0;) {
      const SymbolisedFrame& f = image->Symbolise(pcs_[i], i > 0);
      ++stats_->frames;
      if (!f.known) ++stats_->unsymbolised_frames;
      parent = b_->InternCallsite(parent, Str(f.name), Str(f.module), KindOf(f));
    }
    if (s.kernel_ip) parent = b_->InternCallsite(parent, kernel_frame_, kernel_module_, FrameKind::kKernel);
    b_->AddStackSample(Track(s.pid, s.tid), s.ts_ns, parent, s.period_ns);
    ++stats_->samples;
  }

  StringId Str(const std::string& s) {
    auto it = strings_.find(s);
    if (it == strings_.end()) it = strings_.emplace(s, b_->Intern(s)).first;
    return it->second;
  }

  void NameTracks() {
    for (const auto& [key, track] : tracks_) {
      int32_t pid = static_cast<int32_t>(key >> 32), tid = static_cast<int32_t>(key & 0xffffffffu);
      auto name = perf_.thread_names.find(tid);
      if (name != perf_.thread_names.end()) b_->SetThreadName(track, b_->Intern(name->second));
      auto proc = perf_.thread_names.find(pid);
      if (proc != perf_.thread_names.end()) b_->SetProcessName(IdValue::Num(pid), b_->Intern(proc->second));
    }
  }

  const PerfData& perf_;
  UnwindMode mode_;
  TraceBuilder* b_;
  HostStats* stats_;
  StringId kernel_frame_, kernel_module_;
  std::map<int32_t, std::unique_ptr<ProcessImage>> images_;
  std::unordered_map<uint64_t, uint32_t> tracks_;
  std::unordered_map<std::string, StringId> strings_;
  std::vector<uint64_t> pcs_;
};

}  // namespace

void BuildHostTrace(const PerfData& perf, UnwindMode mode, TraceBuilder* builder, HostStats* stats) {
  HostTraceBuilder(perf, mode, builder, stats).Run();
}

void AddCounters(const CounterSampler& counters, TraceBuilder* builder) {
  std::vector<StringId> names;
  for (const std::string& n : counters.names()) names.push_back(builder->Intern(n));
  std::map<std::pair<int64_t, uint16_t>, uint32_t> tracks;
  for (const CounterPoint& p : counters.points()) {
    const int64_t who = p.device >= 0 ? -1 - p.device : p.pid;
    auto [it, inserted] = tracks.try_emplace({who, p.name}, 0);
    if (inserted) {
      IdValue pid = p.device >= 0 ? IdValue::Str(builder->Intern("GPU " + std::to_string(p.device))) : IdValue::Num(p.pid);
      it->second = builder->CounterTrack(pid, names[p.name], p.device >= 0 ? p.device : kHostDevice);
      builder->SetTrackRole(it->second, TrackKind::kCounter, p.device >= 0 ? Layer::kDevice : Layer::kHost,
                            p.device >= 0 ? p.device : kHostDevice);
    }
    builder->AddCounter(it->second, p.ts_ns, p.value);
  }
}

}  // namespace aiprof
