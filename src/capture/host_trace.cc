#include "src/capture/host_trace.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <unordered_map>
#include <vector>

#include "src/capture/process_image.h"
#include "src/model/page_fault_records.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

// `pid`'s exec times (PerfData::exec_ns, ascending), null if it never exec'd.
const std::vector<int64_t>* ExecTimes(const PerfData& perf, int32_t pid) {
  auto it = perf.exec_ns.find(pid);
  return it == perf.exec_ns.end() ? nullptr : &it->second;
}

// Mappings that describe `pid`'s code while its image `generation` ran
// (ExecGeneration): the mappings recorded from that image's execve to the
// next one (a mapping read from /proc at attach, time 0, is of the image
// then running), plus, before its first execve, those of the process it
// was forked from, as that one's image was at the fork. A launcher that
// execs the program in the same pid (env, taskset, a pyenv shim) maps libc
// at one address and the program at another: one merged list symbolised
// every libc frame of the program against the lower of the two
// (trial_races A2: env, 6 of 12 runs had nearly every stack truncated).
std::vector<Mapping> MappingsOf(const PerfData& perf, int32_t pid, size_t generation) {
  std::vector<Mapping> out;
  int32_t p = pid;
  size_t g = generation;
  for (int hops = 0; hops < 64; ++hops) {
    const std::vector<int64_t>* execs = ExecTimes(perf, p);
    const size_t n = execs ? execs->size() : 0;
    const int64_t from = g > 0 && g <= n ? (*execs)[g - 1] : INT64_MIN;
    const int64_t to = g < n ? (*execs)[g] : INT64_MAX;
    for (const Mapping& m : perf.mappings) {
      if (m.pid != p || (m.ts_ns == 0 ? g != 0 : m.ts_ns < from || m.ts_ns >= to)) continue;
      out.push_back(m);
      out.back().pid = pid;
    }
    if (g > 0) break;  // an image of its own: nothing of the parent's
    auto it = perf.process_parent.find(p);
    if (it == perf.process_parent.end()) break;
    auto fork = perf.fork_ns.find(p);
    p = it->second;
    g = ExecGeneration(ExecTimes(perf, p), fork != perf.fork_ns.end() && fork->second > 0 ? fork->second : INT64_MAX);
  }
  return out;
}

FrameKind KindOf(const SymbolisedFrame& f) {
  if (f.module == "[perf-map]" && f.name.rfind("py::", 0) == 0) return FrameKind::kPython;
  return f.known || f.module != "[unknown]" ? FrameKind::kNative : FrameKind::kUnknown;
}

// The interpreter's frame-evaluation function: where a Python stack goes.
bool IsEvalFrame(const std::string& name) {
  return name == "_PyEval_EvalFrameDefault" || name == "_PyEval_EvalFrame" || name == "PyEval_EvalFrameEx";
}

// Frames a whole stack starts from (a process's entry, a thread's start).
bool IsEntryFrame(const std::string& name) {
  return name == "_start" || name == "__libc_start_main" || name == "__libc_start_call_main" || name == "clone" ||
         name == "clone3" || name == "__clone" || name == "__clone3" || name == "start_thread";
}

class HostTraceBuilder {
 public:
  HostTraceBuilder(const PerfData& perf, UnwindMode mode, TraceBuilder* builder, HostStats* stats,
                   const std::map<int32_t, PythonSamples>* python)
      : perf_(perf), mode_(mode), b_(builder), stats_(stats), python_(python) {
    kernel_frame_ = b_->Intern("[kernel]");
    kernel_module_ = b_->Intern("[kernel.kallsyms]");
    truncated_frame_ = b_->Intern("[native stack truncated]");
    kernel_module_unknown_ = b_->Intern("[unknown]");
    sampler_frame_ = b_->Intern(kPythonSamplerFrame);
    overhead_module_ = b_->Intern(kAiprofOverheadModule);
  }

  // One process at a time: its libdwfl session (an open file and parsed
  // symbol tables per mapped library) is closed before the next one opens,
  // so a capture of a DataLoader with many forked workers, each mapping
  // hundreds of libraries, holds one process's files, not all of them
  // (samples are sorted by track and time at finalize, so the order here
  // does not matter).
  void Run() {
    std::vector<uint32_t> order(perf_.samples.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return perf_.samples[a].pid < perf_.samples[b].pid; });
    for (size_t i = 0; i < order.size();) {
      const int32_t pid = perf_.samples[order[i]].pid;
      size_t end = i;
      while (end < order.size() && perf_.samples[order[end]].pid == pid) ++end;
      // A pid that execs again (a launcher) has one image per execve: its
      // samples by image, each symbolised with that image's mappings.
      const std::vector<int64_t>* execs = ExecTimes(perf_, pid);
      auto generation = [&](uint32_t k) { return ExecGeneration(execs, perf_.samples[k].ts_ns); };
      if (execs != nullptr) {
        std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(i), order.begin() + static_cast<std::ptrdiff_t>(end),
                         [&](uint32_t a, uint32_t b) { return generation(a) < generation(b); });
      }
      while (i < end) {
        const size_t g = generation(order[i]);
        ProcessImage image(pid, MappingsOf(perf_, pid, g));
        for (; i < end && generation(order[i]) == g; ++i) AddSample(perf_.samples[order[i]], &image);
        stats_->modules += image.module_count();
        stats_->modules_unreadable += image.unreadable_module_count();
      }
      ++stats_->processes;
    }
    NameTracks();
    stats_->threads = tracks_.size();
  }

 private:
  uint32_t Track(int32_t pid, int32_t tid) {
    auto key = (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(tid);
    auto it = tracks_.find(key);
    if (it != tracks_.end()) return it->second;
    uint32_t t = b_->ThreadTrack(IdValue::Num(pid), IdValue::Num(tid));
    b_->SetTrackRole(t, TrackKind::kThread, Layer::kHost, kHostDevice);
    tracks_.emplace(key, t);
    return t;
  }

  void AddSample(const RawSample& s, ProcessImage* image) {
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
    frames_.clear();
    size_t outer_eval = SIZE_MAX, inner_eval = SIZE_MAX;
    bool truncated = true;  // until the root frame is an entry
    for (size_t i = pcs_.size(); i-- > 0;) {
      const SymbolisedFrame& f = image->Symbolise(pcs_[i], i > 0);
      ++stats_->frames;
      if (!f.known) ++(f.nearest ? stats_->nearest_symbol_frames : stats_->unsymbolised_frames);
      if (frames_.empty()) truncated = !IsEntryFrame(f.name);
      if (IsEvalFrame(f.name)) {
        if (outer_eval == SIZE_MAX) outer_eval = frames_.size();
        inner_eval = frames_.size();
      }
      frames_.push_back({Str(f.name), Str(f.module), KindOf(f)});
    }
    if (truncated) ++stats_->truncated_stacks;
    if (IsPythonSampler(s.pid, s.tid)) {
      // aiprof's own thread: one frame that says so, not the interpreter
      // and libc frames it runs in (docs/capture.md).
      const uint32_t own = b_->InternCallsite(kNoCallsite, sampler_frame_, overhead_module_, FrameKind::kNative);
      b_->AddStackSample(Track(s.pid, s.tid), s.ts_ns, own, s.period_ns);
      ++stats_->sampler_samples;
      ++stats_->samples;
      return;
    }
    const PythonSamples* py = nullptr;
    uint32_t py_leaf = 0;
    if ((outer_eval != SIZE_MAX || truncated) && python_) py_leaf = PythonLeaf(s, &py);
    uint32_t parent = kNoCallsite;
    if (py_leaf != 0 && outer_eval == SIZE_MAX) {
      // A native stack cut short (unwinding stopped in code without CFI) of
      // a thread that was running Python: under the Python stack of that
      // moment, after a frame that says the native part was cut.
      parent = InternPython(*py, py_leaf, parent);
      parent = b_->InternCallsite(parent, truncated_frame_, kernel_module_unknown_, FrameKind::kUnknown);
    }
    for (size_t i = 0; i < frames_.size(); ++i) {
      if (py_leaf != 0 && i == outer_eval) {
        // The interpreter's frames, outermost to innermost evaluation, give
        // way to the program's Python stack (docs/capture.md).
        parent = InternPython(*py, py_leaf, parent);
        i = inner_eval;
        continue;
      }
      parent = b_->InternCallsite(parent, frames_[i].name, frames_[i].module, frames_[i].kind);
    }
    if (py_leaf != 0) ++stats_->python_samples;
    if (s.kernel_ip) parent = b_->InternCallsite(parent, kernel_frame_, kernel_module_, FrameKind::kKernel);
    b_->AddStackSample(Track(s.pid, s.tid), s.ts_ns, parent, s.period_ns);
    ++stats_->samples;
  }

  // The Python sampler's thread: named in its process's file, or by name.
  bool IsPythonSampler(int32_t pid, int32_t tid) const {
    if (python_) {
      auto proc = python_->find(pid);
      if (proc != python_->end()) {
        const std::vector<int32_t>& tids = proc->second.sampler_tids;
        if (std::find(tids.begin(), tids.end(), tid) != tids.end()) return true;
      }
    }
    auto name = perf_.thread_names.find(tid);
    return name != perf_.thread_names.end() && name->second == kPythonSamplerThreadName;
  }

  // The leaf node of the Python stack of s's thread nearest in time, or 0.
  uint32_t PythonLeaf(const RawSample& s, const PythonSamples** py) {
    auto proc = python_->find(s.pid);
    if (proc == python_->end()) return 0;
    auto thread = proc->second.by_tid.find(s.tid);
    if (thread == proc->second.by_tid.end() || thread->second.empty()) return 0;
    const auto& v = thread->second;
    // The stack the thread was last seen in (a thread that holds the GIL in
    // a long C call, e.g. loading a library, is not sampled until it lets
    // go, and is still in that call), else the next one shortly after.
    auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(s.ts_ns, UINT32_MAX));
    if (it != v.begin() && s.ts_ns - (it - 1)->first <= kPythonStackHeldNs) {
      *py = &proc->second;
      return (it - 1)->second;
    }
    if (it != v.end() && it->first - s.ts_ns <= kPythonSampleMatchNs) {
      *py = &proc->second;
      return it->second;
    }
    return 0;
  }

  // Interns Python node `leaf` and its ancestors under `parent`.
  uint32_t InternPython(const PythonSamples& py, uint32_t leaf, uint32_t parent) {
    py_chain_.clear();
    for (uint32_t n = leaf; n != 0 && n < py.nodes.size() && py_chain_.size() < 4096; n = py.nodes[n].parent) {
      py_chain_.push_back(n);
    }
    for (size_t i = py_chain_.size(); i-- > 0;) {
      const PythonSamples::Node& node = py.nodes[py_chain_[i]];
      const char* base = std::strrchr(node.file.c_str(), '/');
      std::string name =
          node.function + " (" + (base ? base + 1 : node.file.c_str()) + ":" + std::to_string(node.line) + ")";
      parent = b_->InternCallsite(parent, Str(name), Str(node.file), FrameKind::kPython);
    }
    return parent;
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
  StringId kernel_frame_, kernel_module_, truncated_frame_, kernel_module_unknown_, sampler_frame_, overhead_module_;
  std::unordered_map<uint64_t, uint32_t> tracks_;
  std::unordered_map<std::string, StringId> strings_;
  std::vector<uint64_t> pcs_;
  const std::map<int32_t, PythonSamples>* python_;
  struct Frame {
    StringId name, module;
    FrameKind kind;
  };
  std::vector<Frame> frames_;
  std::vector<uint32_t> py_chain_;
};

}  // namespace

Status ReadPythonSamples(const std::string& path, PythonSamples* out) {
  std::ifstream in(path);
  if (!in) return ErrStatus(path + ": cannot read the Python samples the capture hook writes");
  std::string line;
  std::vector<uint32_t> remap = {0};  // the file's node id -> index in out->nodes
  while (std::getline(in, line)) {
    if (line.size() > 2 && line[0] == 'S' && line[1] == ' ') {
      long long ts = 0;
      int tid = 0;
      unsigned node = 0;
      if (std::sscanf(line.c_str() + 2, "%lld %d %u", &ts, &tid, &node) == 3 && node < remap.size() && node != 0) {
        out->by_tid[tid].emplace_back(ts, remap[node]);
        continue;
      }
    } else if (line.size() > 2 && line[0] == 'F' && line[1] == ' ') {
      unsigned id = 0, parent = 0, lineno = 0;
      int consumed = 0;
      const size_t tab = line.find('\t');
      if (tab != std::string::npos &&
          std::sscanf(line.c_str() + 2, "%u %u %u %n", &id, &parent, &lineno, &consumed) == 3 && id == remap.size() &&
          parent < id && 2 + static_cast<size_t>(consumed) <= tab) {
        PythonSamples::Node n;
        n.parent = remap[parent];
        n.line = lineno;
        n.function = line.substr(2 + consumed, tab - 2 - consumed);
        n.file = line.substr(tab + 1);
        remap.push_back(static_cast<uint32_t>(out->nodes.size()));
        out->nodes.push_back(std::move(n));
        continue;
      }
    } else if (line.size() > 2 && line[0] == 'T' && line[1] == ' ') {
      int tid = 0;
      if (std::sscanf(line.c_str() + 2, "%d", &tid) == 1 && tid > 0) {
        out->sampler_tids.push_back(tid);
        continue;
      }
    } else if (line.size() > 2 && line[0] == 'E' && line[1] == ' ') {
      unsigned long long count = 0;
      int consumed = 0;
      if (std::sscanf(line.c_str() + 2, "%llu%n", &count, &consumed) == 1) {
        out->sampler_errors = count;
        const size_t text = line.find_first_not_of(' ', 2 + static_cast<size_t>(consumed));
        out->sampler_first_error = text == std::string::npos ? "" : line.substr(text);
        continue;
      }
    } else if (line.size() > 2 && line[0] == 'X' && line[1] == ' ') {
      long long ts = 0;
      int consumed = 0;
      if (std::sscanf(line.c_str() + 2, "%lld%n", &ts, &consumed) == 1) {
        out->sampler_stopped = true;
        out->sampler_stopped_ns = ts;
        const size_t text = line.find_first_not_of(' ', 2 + static_cast<size_t>(consumed));
        out->sampler_stop_reason = text == std::string::npos ? "" : line.substr(text);
        continue;
      }
    }
    ++out->malformed_lines;  // a line cut by a kill, or not the hook's
  }
  for (auto& [tid, v] : out->by_tid) std::sort(v.begin(), v.end());
  return OkStatus();
}

std::string DiagnosePythonSamples(const std::string& path, int32_t pid, const PythonSamples& py, int64_t start_ns,
                                  TraceBuilder* builder) {
  const std::string who = "the Python sampler of pid " + std::to_string(pid);
  if (py.malformed_lines > 0) {
    builder->Diagnose(
        "python_samples_malformed", path,
        std::to_string(py.malformed_lines) + " lines were not the hook's (a line cut when the program was killed)");
  }
  if (py.sampler_errors > 0) {
    builder->Diagnose("python_sampler_errors", path,
                      who + " skipped " + std::to_string(py.sampler_errors) +
                          " sampling round(s) that failed (first: " + py.sampler_first_error +
                          "); host samples around them may lack Python frames");
  }
  if (!py.sampler_stopped) return "";
  char at[64];
  std::snprintf(at, sizeof(at), "%.2f s into the capture", static_cast<double>(py.sampler_stopped_ns - start_ns) / 1e9);
  const std::string what = who + " stopped " + at + " (" + py.sampler_stop_reason +
                           "): the process's later host samples have no Python frames";
  builder->Diagnose("python_sampler_stopped", path, what);
  return what;
}

void BuildHostTrace(const PerfData& perf, UnwindMode mode, TraceBuilder* builder, HostStats* stats,
                    const std::map<int32_t, PythonSamples>* python) {
  HostTraceBuilder(perf, mode, builder, stats, python).Run();
}

uint64_t AddPageFaults(const PerfData& faults, TraceBuilder* builder) {
  const StringId name = builder->Intern(kPageFaultName), category = builder->Intern(kPageFaultCategory);
  std::unordered_map<uint64_t, uint32_t> tracks;
  uint64_t total = 0;
  for (const RawFault& f : faults.faults) {
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(f.pid)) << 32) | static_cast<uint32_t>(f.tid);
    auto [it, inserted] = tracks.try_emplace(key, 0);
    if (inserted) {
      // The same (pid, tid) track the host samples use (ThreadTrack is keyed
      // by them), so a thread's faults and samples sit together.
      it->second = builder->ThreadTrack(IdValue::Num(f.pid), IdValue::Num(f.tid));
      builder->SetTrackRole(it->second, TrackKind::kThread, Layer::kHost, kHostDevice);
    }
    builder->AddInstant(it->second, f.ts_ns, name, category, 't', builder->ArgCursor(), 0);
    total += f.period;
  }
  return total;
}

void AddCounters(const CounterSampler& counters, TraceBuilder* builder) {
  std::vector<StringId> names;
  for (const std::string& n : counters.names()) names.push_back(builder->Intern(n));
  std::map<std::pair<int64_t, uint16_t>, uint32_t> tracks;
  for (const CounterPoint& p : counters.points()) {
    const int64_t who = p.device >= 0 ? -1 - p.device : p.pid;
    auto [it, inserted] = tracks.try_emplace({who, p.name}, 0);
    if (inserted) {
      IdValue pid =
          p.device >= 0 ? IdValue::Str(builder->Intern("GPU " + std::to_string(p.device))) : IdValue::Num(p.pid);
      it->second = builder->CounterTrack(pid, names[p.name], p.device >= 0 ? p.device : kHostDevice);
      builder->SetTrackRole(it->second, TrackKind::kCounter, p.device >= 0 ? Layer::kDevice : Layer::kHost,
                            p.device >= 0 ? p.device : kHostDevice);
    }
    builder->AddCounter(it->second, p.ts_ns, p.value);
  }
}

}  // namespace aiprof
