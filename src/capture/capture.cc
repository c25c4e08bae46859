#include "src/capture/capture.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <thread>

#include "src/base/child_process.h"
#include "src/base/clock.h"
#include "src/capture/allocator_probe.h"
#include "src/capture/counters.h"
#include "src/capture/page_fault_cost.h"
#include "src/capture/permissions.h"
#include "src/capture/process_image.h"
#include "src/capture/process_names.h"
#include "src/importers/common/importer_registry.h"
#include "src/importers/sdk/sdk_processes.h"
#include "src/model/event_kind.h"
#include "src/model/native_file.h"
#include "src/model/page_fault_records.h"
#include "src/model/trace_builder.h"
#include "src/model/trace_merge.h"

namespace aiprof {
namespace {

constexpr int64_t kCounterPeriodNs = 100'000'000;
constexpr char kTargetExited[] = "target exited";  // the stop reason of a command that ended by itself
constexpr int64_t kPollNs = 20'000'000;
// The capture folder's free space is read every second; under 1 MiB it is full.
constexpr int64_t kSpaceCheckNs = 1'000'000'000;
constexpr uint64_t kFolderFullBytes = uint64_t{1} << 20;
// Ring of the page-fault event per CPU: 512 pages (2 MiB) hold 87,381
// records of 24 bytes, drained at a quarter full or every 50 ms.
constexpr size_t kFaultRingPages = 512;
// Stopping a command (Ctrl-C, --duration; docs/capture.md): it gets SIGINT
// and kGraceNs to exit and write its SDK / torch files; then SIGTERM (the
// torch hook writes what it holds and lets the signal end the program) and
// kTermGraceNs; then SIGKILL. So aiprof never leaves a command running that
// could still write into the capture folder after it is removed.
constexpr int64_t kGraceNs = 5'000'000'000;
constexpr int64_t kTermGraceNs = 10'000'000'000;

std::atomic<int> g_sigint{0};
std::atomic<bool> g_sigint_from_user{false};
std::atomic<int> g_stop_signal{0};  // the first stop signal's number (its name goes in the stop reason)

void OnSigint(int sig, siginfo_t* info, void*) {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, sig);
  g_sigint.fetch_add(1);
  // A terminal's ^C reaches the whole foreground process group (the command
  // too, SI_KERNEL); a kill(1) reaches aiprof alone and is passed on.
  if (info != nullptr && info->si_code != SI_KERNEL) g_sigint_from_user.store(true);
}

std::vector<std::string> ListDir(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        out.push_back(dir + "/" + name);
      }
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "SIGKILL" for 9; "signal N" for one without a name here.
std::string SignalName(int sig) {
  static const std::map<int, const char*> kNames = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"},
      {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
      {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
      {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"}};
  auto it = kNames.find(sig);
  return it != kNames.end() ? it->second : "signal " + std::to_string(sig);
}

// A kernel thread (PF_KTHREAD in /proc/PID/stat's flags) has no user-space
// code: perf would record nothing of it.
bool IsKernelThread(int32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return false;
  // After the comm: state ppid pgrp session tty_nr tpgid flags.
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int i = 0; i < 7 && fields >> field; ++i) {
  }
  constexpr unsigned long kPfKthread = 0x00200000;
  return (std::strtoul(field.c_str(), nullptr, 10) & kPfKthread) != 0;
}

// The kernel maps one vDSO image into every process (clock_gettime,
// gettimeofday: time.perf_counter() runs there). Its PERF_RECORD_MMAP2 (and
// its /proc maps line) names it "[vdso]", with no file behind it, so
// samples in it were unsymbolised addresses with no module. aiprof's own
// copy is written to `path` for libdwfl (NameVdso); returns its size (0:
// none written).
uint64_t WriteOwnVdso(const std::string& path) {
  const uint64_t base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return 0;
  uint64_t size = 0;
  for (const Mapping& m : ReadProcMaps(getpid())) {
    if (m.path == "[vdso]" && m.start == base) size = m.end - m.start;
  }
  if (size == 0) return 0;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(base), static_cast<std::streamsize>(size));
  return out ? size : 0;
}

void RemoveTree(const std::string& path) {
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string child = path + "/" + name;
      struct stat st;
      if (lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        RemoveTree(child);
      } else {
        unlink(child.c_str());
      }
    }
    closedir(d);
  }
  rmdir(path.c_str());
}

// The torch hook streams torch-<pid>.json one event a line as the run goes
// and closes it ("]}") when the program exits; a program that ended without
// running its exit handlers (os._exit, SIGKILL) leaves it open. Cuts it
// after its last whole line and closes it. Returns whether it had to.
StatusOr<bool> CompleteTorchStream(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return ErrStatus(path + ": " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return ErrStatus(path + ": " + std::strerror(errno));
  }
  char tail[4096];
  const off_t size = st.st_size;
  off_t keep = -1;  // bytes up to and with the last '\n'
  bool closed = false;
  for (off_t end = size; end > 0 && keep < 0;) {
    const off_t begin = end > static_cast<off_t>(sizeof(tail)) ? end - static_cast<off_t>(sizeof(tail)) : 0;
    const ssize_t n = pread(fd, tail, static_cast<size_t>(end - begin), begin);
    if (n != end - begin) break;
    if (end == size) closed = n >= 3 && std::memcmp(tail + n - 3, "]}\n", 3) == 0;
    if (closed) break;
    for (ssize_t i = n - 1; i >= 0; --i) {
      if (tail[i] == '\n') {
        keep = begin + i + 1;
        break;
      }
    }
    end = begin;
  }
  if (closed) {
    close(fd);
    return false;
  }
  const bool ok = keep > 0 && ftruncate(fd, keep) == 0 && pwrite(fd, "]}\n", 3, keep) == 3;
  close(fd);
  if (!ok) return ErrStatus(path + ": the torch hook's file has no whole event to keep");
  return true;
}

// "steps_from" of the torch hook's sync file: what its steps were found
// from ("optimizer.step", "dataloader.next", "module.forward", or two of them
// joined by " then " when a higher source took over), or "" when it found none.
std::string TorchStepsFrom(const std::string& sync_path) {
  simdjson::padded_string json;
  if (simdjson::padded_string::load(sync_path).get(json) != simdjson::SUCCESS) return "";
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view from;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS || doc["steps_from"].get_string().get(from)) return "";
  return std::string(from);
}

// The rank the hook's torch layer read from torch.distributed (.sync's
// "rank", "world_size"); false when it has none.
bool TorchDistRank(const std::string& sync_path, ProcessRole* role) {
  simdjson::padded_string json;
  if (simdjson::padded_string::load(sync_path).get(json) != simdjson::SUCCESS) return false;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  int64_t rank = -1, world = 0;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS || doc["rank"].get_int64().get(rank)) return false;
  if (rank < 0 || rank > INT32_MAX) return false;
  if (doc["world_size"].get_int64().get(world) || world < 0) world = 0;
  role->rank = static_cast<int32_t>(rank);
  role->world_size = world;
  return true;
}

std::string FormatBytes(uint64_t b) {
  char buf[32];
  if (b >= (1u << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f MB", static_cast<double>(b) / (1 << 20));
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f kB", static_cast<double>(b) / 1024);
  }
  return buf;
}

int ShellStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string Comm(int32_t pid, int32_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  std::string s;
  std::getline(in, s);
  return s;
}

class Session {
 public:
  explicit Session(const CaptureOptions& o) : o_(o) {}

  StatusOr<CaptureResult> Run() {
    if (o_.pid == 0) RETURN_IF_ERROR(CheckCommand(o_.command));
    RETURN_IF_ERROR(MakeDir());
    start_mono_ns_ = MonotonicNs();
    realtime_minus_mono_ns_ = RealtimeNs() - start_mono_ns_;
    InstallSigint();
    // Before the command starts: the cost does not land in its run.
    if (o_.page_faults) fault_cost_ = MeasurePageFaultCost();
    Status st = o_.pid > 0 ? Attach() : Launch();
    if (st.ok() && o_.on_started) o_.on_started();
    if (st.ok()) st = Record();
    if (o_.on_stopped) o_.on_stopped();
    // SIGINT stays caught (and ignored) while the file is being made: a
    // second Ctrl-C must not lose the recording.
    if (!st.ok()) {
      RestoreSigint();
      Cleanup();
      return st;
    }
    StatusOr<CaptureResult> result = Build();
    Cleanup();
    return result;
  }

 private:
  Status MakeDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/aiprof-capture-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) return ErrStatus("cannot create a capture folder " + tmpl + ": " + std::strerror(errno));
    dir_ = tmpl;
    mkdir((dir_ + "/sdk").c_str(), 0700);
    mkdir((dir_ + "/torch").c_str(), 0700);
    mkdir((dir_ + "/hook").c_str(), 0700);
    vdso_size_ = WriteOwnVdso(dir_ + "/vdso.so");
    if (o_.scope != CaptureScope::kApp) {
      std::ofstream hook(dir_ + "/hook/sitecustomize.py");
      hook << TorchHookSource();
      if (!hook) return ErrStatus("cannot write " + dir_ + "/hook/sitecustomize.py");
      std::ofstream sampler(dir_ + "/hook/aiprof_pysampler.py");
      sampler << PythonSamplerSource();
      if (!sampler) return ErrStatus("cannot write " + dir_ + "/hook/aiprof_pysampler.py");
    }
    return OkStatus();
  }

  void Cleanup() {
    if (o_.keep_dir) {
      std::fprintf(stderr, "aiprof: capture folder kept: %s\n", dir_.c_str());
    } else if (!dir_.empty()) {
      RemoveTree(dir_);
    }
  }

  void InstallSigint() {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = OnSigint;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_sigint_);
    // A SIGTERM to aiprof (a scheduler ending the job) stops the capture the
    // same way and still writes the file.
    sigaction(SIGTERM, &sa, &old_sigterm_);
    g_sigint.store(0);
    g_sigint_from_user.store(false);
    g_stop_signal.store(0);
  }
  void RestoreSigint() {
    sigaction(SIGINT, &old_sigint_, nullptr);
    sigaction(SIGTERM, &old_sigterm_, nullptr);
  }

  PerfOptions SamplerOptions() const {
    PerfOptions p;
    p.hz = o_.cpu_hz;
    p.dwarf = o_.unwind != UnwindMode::kFramePointer;
    // The memory kept for DWARF stack copies (8 KiB a sample at most):
    // AIPROF_DWARF_STACK_MB, default 512; past it samples keep their
    // frame-pointer stacks only (docs/capture.md, "Host samples").
    if (const char* mb = std::getenv("AIPROF_DWARF_STACK_MB"); mb != nullptr && *mb != '\0') {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(mb, &end, 10);
      if (end != nullptr && *end == '\0' && v > 0 && v <= (1ull << 20)) p.max_stack_memory = v << 20;
    }
    return p;
  }

  // The samples past the DWARF stack cap, in words (empty when none).
  std::string StackCapNote(const PerfData& perf) const {
    if (perf.stacks_dropped == 0) return "";
    char text[320];
    std::snprintf(text, sizeof(text),
                  "%llu samples from +%.1f s on kept no DWARF stack copy (the copies reached their %llu MiB cap, "
                  "AIPROF_DWARF_STACK_MB): they have frame-pointer stacks, cut short in code built without them "
                  "(lower --cpu-hz or --duration, or raise the cap)",
                  static_cast<unsigned long long>(perf.stacks_dropped),
                  static_cast<double>(perf.first_stack_dropped_ns - start_mono_ns_) / 1e9,
                  static_cast<unsigned long long>(SamplerOptions().max_stack_memory >> 20));
    return text;
  }

  // Opens the sampling event for `tid`; a refusal is recorded, not fatal.
  void OpenSampling(int32_t tid, bool on_exec) {
    if (o_.cpu_hz <= 0 || perf_blocked_) return;
    if (!sampler_) sampler_ = std::make_unique<PerfSampler>(SamplerOptions());
    int err = 0;
    Status st = sampler_->OpenTask(tid, on_exec, &err);
    if (st.ok()) return;
    if (err == ESRCH) return;  // the thread ended meanwhile
    perf_blocked_ = true;
    perf_error_ = ExplainPerfError(err, ReadPerfEnvironment());
    std::fprintf(stderr, "aiprof: %s\n", perf_error_.c_str());
  }

  // Opens the page-fault event for `tid`; a refusal is recorded, not fatal.
  void OpenFaults(int32_t tid, bool on_exec) {
    if (!o_.page_faults || faults_blocked_) return;
    if (!fault_sampler_) {
      PerfOptions p;
      p.event = PerfEvent::kPageFaults;
      p.fault_period = o_.fault_period;
      p.dwarf = false;
      p.ring_pages = kFaultRingPages;
      fault_sampler_ = std::make_unique<PerfSampler>(p);
    }
    int err = 0;
    Status st = fault_sampler_->OpenTask(tid, on_exec, &err);
    if (st.ok() || err == ESRCH) return;
    faults_blocked_ = true;
    faults_error_ = ExplainPerfError(err, ReadPerfEnvironment());
    std::fprintf(stderr, "aiprof: page faults not recorded: %s\n", faults_error_.c_str());
  }

  Status Launch() {
    if (o_.command.empty()) return ErrStatus("aiprof trace: no command given (use -- CMD ARGS... or --pid N)");
    int go[2];
    if (pipe2(go, O_CLOEXEC) != 0) return ErrStatus(std::string("pipe: ") + std::strerror(errno));
    PreparedCommand command = PrepareCommand();
    std::fflush(nullptr);
    child_ = fork();
    if (child_ < 0) return ErrStatus(std::string("fork: ") + std::strerror(errno));
    if (child_ == 0) ChildExec(go, &command);
    close(go[0]);
    malloc_settings_ = AllocatorSettingsOfSelf();  // what the command inherits
    OpenSampling(child_, /*on_exec=*/true);
    OpenFaults(child_, /*on_exec=*/true);
    counters_ = std::make_unique<CounterSampler>(kCounterPeriodNs, o_.scope == CaptureScope::kFullStack);
    counters_->AddProcess(child_);
    if (sampler_ && sampler_->event_count() > 0) RETURN_IF_ERROR(sampler_->Start());
    if (fault_sampler_ && fault_sampler_->event_count() > 0) RETURN_IF_ERROR(fault_sampler_->Start());
    counters_->Start();
    // The command starts now (its execve enables the sampling event).
    char c = 1;
    exec_mono_ns_ = MonotonicNs();
    if (write(go[1], &c, 1) != 1) return ErrStatus("cannot start the command");
    close(go[1]);
    return OkStatus();
  }

  // The command and its environment, built before the fork (the child of
  // a process with threads may only exec: PreparedCommand).
  PreparedCommand PrepareCommand() const {
    PreparedCommand command(o_.command, "aiprof");
    // aiprof killed (SIGKILL, the OOM killer) stops the command rather than
    // leaving it running instrumented, writing into a capture folder no
    // one will read (1.3 MB/s for a torch loop).
    command.StopWithParent(SIGTERM);
    command.SetEnv("AIPROF_OUTPUT", dir_ + "/sdk/");
    command.SetEnv("AIPROF_CAPTURE_DIR", dir_);
    if (o_.scope != CaptureScope::kApp) {
      const std::string old = command.GetEnv("PYTHONPATH");
      command.SetEnv("PYTHONPATH", dir_ + "/hook" + (old.empty() ? std::string() : ":" + old));
      command.SetEnv("AIPROF_CAPTURE_CUDA", o_.scope == CaptureScope::kFullStack ? "1" : "0");
      // Python frames for the host samples (torch_hook.py): 200 Hz, the most
      // the GIL's 5 ms switch interval lets a sampler thread see; a value
      // the user set is kept.
      if (o_.cpu_hz > 0) command.SetEnv("AIPROF_PY_SAMPLE_HZ", "200", /*overwrite=*/false);
      command.SetEnv("AIPROF_TORCH_EVERY", std::to_string(o_.torch_every));
    }
    return command;
  }

  // In the child: async-signal-safe calls only.
  [[noreturn]] void ChildExec(int go[2], PreparedCommand* command) {
    // aiprof's handlers must not catch a stop meant for the command between
    // fork and exec (a --duration of 1ms): the command gets the default.
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    close(go[1]);
    char c;
    while (read(go[0], &c, 1) < 0 && errno == EINTR) {
    }
    command->ExecPrepared();
  }

  std::vector<int32_t> Threads(int32_t pid) {
    std::vector<int32_t> out;
    if (DIR* d = opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
      while (dirent* e = readdir(d)) {
        if (e->d_name[0] != '.') out.push_back(std::atoi(e->d_name));
      }
      closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  Status Attach() {
    if (kill(o_.pid, 0) != 0 && errno == ESRCH) return ErrStatus("aiprof trace --pid " + std::to_string(o_.pid) + ": no such process");
    if (IsKernelThread(o_.pid)) {
      return ErrStatus("aiprof trace --pid " + std::to_string(o_.pid) + ": " + Comm(o_.pid, o_.pid) +
                       " is a kernel thread: it runs no user-space program to record");
    }
    std::vector<int32_t> tids = Threads(o_.pid);
    if (tids.empty()) return ErrStatus("aiprof trace --pid " + std::to_string(o_.pid) + ": cannot list /proc/" + std::to_string(o_.pid) + "/task");
    // Threads created later by these are followed through the inherited event;
    // a second listing catches those created while the first were opened.
    for (int32_t tid : tids) {
      OpenSampling(tid, false);
      OpenFaults(tid, false);
    }
    for (int32_t tid : Threads(o_.pid)) {
      if (std::binary_search(tids.begin(), tids.end(), tid)) continue;
      OpenSampling(tid, false);
      OpenFaults(tid, false);
    }
    // A launched command still gives its SDK spans and torch files when
    // sampling is refused; an attached process gives nothing but /proc
    // counters, so asking for its samples and getting none is an error.
    if (o_.cpu_hz > 0 && perf_blocked_ && (!o_.page_faults || faults_blocked_)) {
      return ErrStatus("aiprof trace --pid " + std::to_string(o_.pid) + ": its samples cannot be recorded: " +
                       perf_error_ + " (--cpu-hz 0 records its /proc counters only)");
    }
    attach_maps_ = ReadProcMaps(o_.pid);
    malloc_settings_ = AllocatorSettingsOfProcess(o_.pid);
    ProbeMalloc();
    for (int32_t tid : Threads(o_.pid)) attach_names_[tid] = Comm(o_.pid, tid);
    counters_ = std::make_unique<CounterSampler>(kCounterPeriodNs, o_.scope == CaptureScope::kFullStack);
    counters_->AddProcess(o_.pid);
    if (sampler_ && sampler_->event_count() > 0) RETURN_IF_ERROR(sampler_->Start());
    if (fault_sampler_ && fault_sampler_->event_count() > 0) RETURN_IF_ERROR(fault_sampler_->Start());
    counters_->Start();
    return OkStatus();
  }

  bool TargetAlive() {
    if (o_.pid > 0) return kill(o_.pid, 0) == 0 || errno != ESRCH;
    int status = 0;
    pid_t r = waitpid(child_, &status, WNOHANG);
    if (r == child_) {
      exit_code_ = ShellStatus(status);
      exited_ = true;
      // Killed by itself or someone else; not a stop aiprof made (its reason is set).
      if (WIFSIGNALED(status) && stop_reason_ == kTargetExited) {
        stop_reason_ = "target killed by " + SignalName(WTERMSIG(status));
      }
      return false;
    }
    return true;
  }

  void Progress(bool final_line) {
    if (!o_.progress) return;
    const double s = static_cast<double>(MonotonicNs() - start_mono_ns_) / 1e9;
    uint64_t samples = sampler_ ? sampler_->samples_so_far() : 0;
    uint64_t bytes = sampler_ ? sampler_->bytes_so_far() : 0;
    std::fprintf(stderr, "\r[aiprof trace] %.1f s, %llu samples, %s read%s", s,
                 static_cast<unsigned long long>(samples), FormatBytes(bytes).c_str(), final_line ? "\n" : "   ");
    std::fflush(stderr);
  }

  // Which malloc the target runs with, once its libraries are mapped (a
  // launched command: once it has exec'd, its executable is not aiprof's).
  // A launched command is probed again each time it execs another program
  // in the same pid: a launcher (env LD_PRELOAD=..., taskset, a pyenv shim)
  // maps its own libc first, and the probe took the launcher's allocator
  // (trial_races A1: 13 of 40 loaded runs of `env LD_PRELOAD=jemalloc`
  // read glibc). Its settings are the exec'd program's environment.
  void ProbeMalloc() {
    const int32_t pid = o_.pid > 0 ? o_.pid : child_;
    if (o_.pid > 0) {
      if (!malloc_probed_) malloc_probed_ = ProbeAllocatorLibrary(pid, &malloc_library_);
      return;
    }
    // Not exec'd yet (still aiprof's fork), or this image probed already.
    const std::string exe = ExecutableOf(pid);
    if (exe.empty() || exe == self_exe_ || (malloc_probed_ && exe == malloc_exe_)) return;
    std::string library;
    if (!ProbeAllocatorLibrary(pid, &library)) return;  // mid-execve: libc is not mapped yet
    malloc_probed_ = true;
    malloc_library_ = std::move(library);
    malloc_exe_ = exe;
    // An environ read as empty by a command that has gone keeps what it inherited.
    const std::string settings = AllocatorSettingsOfProcess(pid);
    if (!settings.empty() || ExecutableOf(pid) == exe) malloc_settings_ = settings;
  }

  // A "[vdso]" mapping (the kernel's record of an image's vDSO, or the
  // /proc maps line read at attach) is read from aiprof's copy of the
  // image. The record carries the address each execve mapped it at, so a
  // launcher that execs the program (env, a pyenv shim) has both, each in
  // its own image's time: once read from /proc/PID/auxv at one poll, it was
  // the launcher's or, mid-execve, none (stop 65's CI failure).
  void NameVdso(Mapping* m) const {
    if (m->path != "[vdso]" || vdso_size_ == 0) return;
    m->path = dir_ + "/vdso.so";
    m->name = "[vdso]";
    m->end = std::min(m->end, m->start + vdso_size_);
  }

  // The capture folder's file system, once a second: a full one (a small
  // TMPDIR) cuts what the program writes there (the torch hook stops its
  // layer, the Python sampler drops lines, the SDK its spill), which is
  // said on the stderr line and in a diagnostic.
  void CheckFolderSpace(int64_t now) {
    struct statvfs fs;
    if (folder_full_ns_ != 0 || statvfs(dir_.c_str(), &fs) != 0) return;
    if (static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize < kFolderFullBytes) folder_full_ns_ = now;
  }

  Status Record() {
    int64_t next_progress = start_mono_ns_;
    int64_t next_space_check = start_mono_ns_;
    while (TargetAlive()) {
      const int64_t now = MonotonicNs();
      if (g_sigint.load() > 0) {
        const bool term = g_stop_signal.load() == SIGTERM;
        stop_reason_ = term ? "stopped (SIGTERM)" : "interrupted (SIGINT)";
        // The command gets the signal aiprof got: a SIGTERM (a scheduler's
        // preemption, `docker stop`) reaches a training script's own SIGTERM
        // handler (its checkpoint), not a KeyboardInterrupt. A terminal's ^C
        // already reached it (SI_KERNEL); SIGTERM never comes from there.
        if (o_.pid == 0 && (term || g_sigint_from_user.load())) {
          kill(child_, term ? SIGTERM : SIGINT);
          stop_signal_sent_ = term ? SIGTERM : SIGINT;
        }
        break;
      }
      const int64_t since = o_.pid > 0 ? start_mono_ns_ : exec_mono_ns_;
      if (o_.duration_ns > 0 && now - since >= o_.duration_ns) {
        stop_reason_ = "duration reached";
        if (o_.pid == 0) kill(child_, SIGINT);
        break;
      }
      ProbeMalloc();
      if (now >= next_space_check) {
        CheckFolderSpace(now);
        next_space_check = now + kSpaceCheckNs;
      }
      if (now >= next_progress) {
        Progress(false);
        next_progress = now + 500'000'000;
      }
      std::this_thread::sleep_for(std::chrono::nanoseconds(kPollNs));
    }
    end_mono_ns_ = MonotonicNs();
    CheckFolderSpace(end_mono_ns_);
    if (sampler_) sampler_->Stop();
    if (fault_sampler_) fault_sampler_->Stop();
    if (counters_) counters_->Stop();
    Progress(true);
    if (o_.pid == 0 && !exited_) StopCommand();
    return OkStatus();
  }

  // Waits up to `ns` for the command to exit; true if it did.
  bool WaitExit(int64_t ns) {
    const int64_t deadline = MonotonicNs() + ns;
    while (MonotonicNs() < deadline && TargetAlive()) std::this_thread::sleep_for(std::chrono::nanoseconds(kPollNs));
    return exited_;
  }

  // The command had SIGINT (or the terminal's ^C); see kGraceNs. One that
  // was passed aiprof's SIGTERM has both graces before SIGKILL.
  void StopCommand() {
    if (stop_signal_sent_ == SIGTERM) {
      if (WaitExit(kGraceNs + kTermGraceNs)) return;
      std::fprintf(stderr,
                   "aiprof: the command (pid %d) is still running %.0f s after SIGTERM: sending SIGKILL; "
                   "what it had not written is not in the trace\n",
                   static_cast<int>(child_), static_cast<double>(kGraceNs + kTermGraceNs) / 1e9);
      KillCommand();
      return;
    }
    if (WaitExit(kGraceNs)) return;
    std::fprintf(stderr, "aiprof: the command (pid %d) is still running %.0f s after SIGINT: sending SIGTERM\n",
                 static_cast<int>(child_), static_cast<double>(kGraceNs) / 1e9);
    kill(child_, SIGTERM);
    if (WaitExit(kTermGraceNs)) return;
    std::fprintf(stderr, "aiprof: the command (pid %d) is still running %.0f s after SIGTERM: sending SIGKILL; "
                 "what it had not written is not in the trace\n", static_cast<int>(child_),
                 static_cast<double>(kTermGraceNs) / 1e9);
    KillCommand();
  }

  void KillCommand() {
    kill(child_, SIGKILL);
    int status = 0;
    while (waitpid(child_, &status, 0) < 0 && errno == EINTR) {
    }
    exit_code_ = ShellStatus(status);
    exited_ = true;
  }

  StatusOr<std::unique_ptr<Trace>> HostPart(HostStats* stats) {
    auto trace = std::make_unique<Trace>();
    TraceBuilder b(trace.get());
    if (sampler_) {
      PerfData& perf = sampler_->data();
      perf.mappings.insert(perf.mappings.end(), attach_maps_.begin(), attach_maps_.end());
      // The kernel's PERF_RECORD_MMAP2 of each image's vDSO names it
      // "[vdso]", with no file: it is read from aiprof's own copy.
      for (Mapping& m : perf.mappings) NameVdso(&m);
      for (const auto& [tid, name] : attach_names_) {
        // Names given later (PERF_RECORD_COMM) win over those read at attach.
        if (!name.empty()) perf.thread_names.try_emplace(tid, name);
      }
      InheritThreadNames(&perf);
      std::map<int32_t, PythonSamples> python;
      std::vector<std::string> py_files = ListDir(dir_ + "/python", ".txt");
      if (!o_.python_samples_dir.empty()) {
        for (std::string& f : ListDir(o_.python_samples_dir, ".txt")) py_files.push_back(std::move(f));
      }
      for (const std::string& f : py_files) {
        const std::string base = f.substr(f.rfind('/') + 1);  // py-<pid>.txt
        const int32_t pid = std::atoi(base.c_str() + 3);
        if (base.rfind("py-", 0) != 0 || pid <= 0) continue;
        if (python.count(pid)) {
          b.Diagnose("python_samples_duplicate", f, "a second file of Python samples for pid " + std::to_string(pid) +
                     " (the first was kept)");
          continue;
        }
        Status st = ReadPythonSamples(f, &python[pid]);
        if (!st.ok()) b.Diagnose("python_samples_unreadable", f, st.message());
        const std::string stopped = DiagnosePythonSamples(f, pid, python[pid], start_mono_ns_, &b);
        if (!stopped.empty()) std::fprintf(stderr, "aiprof: %s\n", stopped.c_str());
      }
      BuildHostTrace(perf, o_.unwind, &b, stats, &python);
      perf_lost_ = perf.lost_records;
      if (stats->modules_unreadable > 0) {
        b.Diagnose("host_modules_unreadable", "mapped libraries",
                   std::to_string(stats->modules_unreadable) +
                       " mapped files could not be opened or read as ELF (e.g. out of file descriptors): frames in "
                       "them are unsymbolised");
      }
      if (perf.lost_records > 0) {
        b.Diagnose("perf_records_lost", "perf ring buffer", std::to_string(perf.lost_records) +
                   " records were lost because the reader fell behind (use a lower --cpu-hz)");
      }
      if (perf.stacks_dropped > 0) {
        stack_cap_note_ = StackCapNote(perf);
        b.Diagnose("perf_stacks_dropped", "perf stack copies", stack_cap_note_);
      }
    }
    if (perf_blocked_) b.Diagnose("host_sampling_blocked", "perf_event_open", perf_error_);
    if (fault_sampler_) {
      const PerfData& f = fault_sampler_->data();
      fault_count_ = AddPageFaults(f, &b);
      fault_records_ = f.faults.size();
      fault_lost_ = f.lost_records;
      if (f.lost_records > 0) {
        b.Diagnose("page_fault_records_lost", "perf ring buffer (page faults)", std::to_string(f.lost_records) +
                   " page-fault records were lost because the reader fell behind: fault counts are low "
                   "(use --fault-period N)");
      }
    }
    if (faults_blocked_) b.Diagnose("page_faults_blocked", "perf_event_open", faults_error_);
    if (counters_) AddCounters(*counters_, &b);
    RETURN_IF_ERROR(b.Finalize());
    trace->metadata["source_format"] = "aiprof_capture";
    return trace;
  }

  StatusOr<CaptureResult> Build() {
    const auto t0 = std::chrono::steady_clock::now();
    HostStats stats;
    std::vector<std::unique_ptr<Trace>> parts;
    ASSIGN_OR_RETURN(std::unique_ptr<Trace> host, HostPart(&stats));
    parts.push_back(std::move(host));
    std::map<std::string, std::string> meta;
    Diagnostics extra;
    if (folder_full_ns_ != 0) {
      const char* tmp = std::getenv("TMPDIR");
      char at[32];
      std::snprintf(at, sizeof(at), "+%.1f s", static_cast<double>(folder_full_ns_ - start_mono_ns_) / 1e9);
      folder_full_note_ =
          "the capture folder's file system (" + dir_.substr(0, dir_.rfind('/')) + ") had under 1 MiB free from " + at +
          ": what the program wrote there after that may be lost (torch ops, Python frames, SDK spans); "
          "point TMPDIR" +
          std::string(tmp && *tmp ? " (now " + std::string(tmp) + ")" : "") + " at a larger one";
      extra.Add("capture_folder_full", dir_, folder_full_note_);
      meta["capture.folder_full_at_ns"] = std::to_string(folder_full_ns_);
    }
    size_t sdk_files = 0, torch_files = 0;
    // Each process's rank: the hook's role files (RANK in its environment),
    // then what its torch layer read from torch.distributed, which wins.
    std::map<int64_t, ProcessRole> roles = ProcessNames();
    // A process that never wrote its event file (os._exit, a signal) left its
    // spill file, <name>.aiprof.part, read in place of an event file beside it
    // by the importer's one rule (SupersededBySpillFile), as a folder of SDK
    // files is read; in path order, as there.
    std::vector<std::string> sdk_paths = ListDir(dir_ + "/sdk", ".aiprof");
    for (std::string& f : ListDir(dir_ + "/sdk", ".aiprof.part")) sdk_paths.push_back(std::move(f));
    std::sort(sdk_paths.begin(), sdk_paths.end());
    const std::vector<std::string> listed = sdk_paths;
    std::erase_if(sdk_paths, [&](const std::string& f) { return SupersededBySpillFile(f, listed); });
    for (const std::string& f : sdk_paths) {
      // The SDK's event file (or an older SDK's native file) through its importer.
      StatusOr<std::unique_ptr<Trace>> t = ImportTraceFile(f);
      if (!t.ok()) {
        extra.Add("sdk_file_unreadable", f, t.status().message());
        continue;
      }
      std::unique_ptr<Trace> sdk = std::move(t).value();
      sdk->metadata.erase("source_path");  // a file of the capture's own folder
      if (o_.sampling_rate < 1.0) SampleTopLevelSlices(sdk.get(), o_.sampling_rate);
      parts.push_back(std::move(sdk));
      ++sdk_files;
    }
    for (const std::string& f : ListDir(dir_ + "/torch", ".json")) {
      StatusOr<bool> cut = CompleteTorchStream(f);
      if (!cut.ok()) {
        extra.Add("torch_file_unreadable", f, cut.status().message());
        continue;
      }
      if (*cut) {
        extra.Add("torch_stream_unterminated", f,
                  "the program ended without its exit handlers (os._exit, a signal), or the hook stopped writing "
                  "(its line on the program's stderr: a full capture folder): its torch ops are kept up to "
                  "the last chunk the hook wrote");
      }
      StatusOr<std::unique_ptr<Trace>> t = ImportTraceFile(f);
      if (!t.ok()) {
        extra.Add("torch_file_unreadable", f, t.status().message());
        continue;
      }
      std::unique_ptr<Trace> torch = std::move(t).value();
      int64_t offset = 0, error = 0;
      const std::string sync = f.substr(0, f.size() - 5) + ".sync";
      Status st = MeasureTorchOffset(*torch, sync, &offset, &error);
      // The SDK's iteration markers, where the program has them, are its
      // steps; the hook's (optimizer.step, DataLoader, module calls) stay
      // as ProfilerStep#N slices only.
      const bool sdk_steps = std::any_of(parts.begin() + 1, parts.begin() + 1 + static_cast<std::ptrdiff_t>(sdk_files),
                                         [](const auto& p) { return p->steps.size() > 0; });
      if (sdk_steps) {
        torch->steps = StepTable();
      } else if (std::string from = TorchStepsFrom(sync); !from.empty() && torch->steps.size() > 0) {
        meta["capture.steps_from"] = from;
      }
      const std::string file_name = f.substr(f.rfind('/') + 1);  // torch-<pid>.json
      const int64_t pid = std::strtoll(file_name.c_str() + 6, nullptr, 10);
      if (file_name.rfind("torch-", 0) == 0 && pid > 0) {
        ProcessRole& role = roles[pid];
        TorchDistRank(sync, &role);
        if (role.rank != kNoRank) SetTraceRank(role.rank, torch.get());  // its device tracks too
      }
      LabelClockSyncMarks(torch.get());  // after the offset: it pairs the marks by name
      if (!st.ok()) {
        extra.Add("torch_clock_unaligned", f, st.message());
      } else {
        ShiftTrace(torch.get(), -offset);
        const std::string base = f.substr(f.rfind('/') + 1);
        meta["capture.clock_offset_ns." + base] = std::to_string(offset);
        meta["capture.clock_offset_error_ns." + base] = std::to_string(error);
      }
      parts.push_back(std::move(torch));
      ++torch_files;
    }
    std::unique_ptr<Trace> trace = parts.size() == 1 ? std::move(parts[0]) : MergeTraces(std::move(parts));
    for (const auto& [kind, e] : extra.entries()) {
      for (uint64_t i = 0; i < e.count; ++i) trace->diagnostics.Add(kind, e.first_where, e.description);
    }
    for (auto& [k, v] : meta) trace->metadata[k] = v;
    NameProcesses(roles, trace.get());
    InheritRanks(&roles);
    AssignRanks(roles, trace.get());
    const double post_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Describe(trace.get(), stats, sdk_files, torch_files);
    CaptureResult r;
    char line[512];
    std::snprintf(line, sizeof(line),
                  "%s after %.2f s: %llu host samples (%llu DWARF, %llu frame-pointer stacks, %llu with Python "
                  "frames, %llu truncated), %zu application "
                  "file(s), %zu torch file(s), %zu slices, %zu counter points, %llu minor page faults (%llu records "
                  "lost); post-processing %.2f s",
                  stop_reason_.c_str(), static_cast<double>(end_mono_ns_ - start_mono_ns_) / 1e9,
                  static_cast<unsigned long long>(stats.samples), static_cast<unsigned long long>(stats.dwarf_stacks),
                  static_cast<unsigned long long>(stats.fp_stacks), static_cast<unsigned long long>(stats.python_samples),
                  static_cast<unsigned long long>(stats.truncated_stacks), sdk_files, torch_files, trace->slices.size(),
                  trace->counters.size(), static_cast<unsigned long long>(fault_count_),
                  static_cast<unsigned long long>(fault_lost_), post_s);
    r.summary = line;
    // What went missing is on the line too, not only in the trace's diagnostics.
    if (perf_lost_ > 0)
      r.summary += "; " + std::to_string(perf_lost_) + " perf sample records lost (use a lower --cpu-hz)";
    if (!stack_cap_note_.empty()) r.summary += "; " + stack_cap_note_;
    if (!folder_full_note_.empty()) r.summary += "; " + folder_full_note_;
    if (stats.modules_unreadable > 0) {
      r.summary +=
          "; " + std::to_string(stats.modules_unreadable) + " mapped files unreadable, their frames unsymbolised";
    }
    r.exit_code = exit_code_;
    r.trace = std::move(trace);
    return r;
  }

  // fork() and clone() write no PERF_RECORD_COMM: a task created during the
  // capture keeps its creator's name until it execs or renames itself, so a
  // thread without a name takes its process's, and a process its parent's
  // (the DataLoader workers forked while `--pid` was attached read "pid N,
  // tid N" with no process name: trial_cap2 m10).
  static void InheritThreadNames(PerfData* perf) {
    for (int pass = 0; pass < 64; ++pass) {  // a chain of forks, one hop a pass
      bool more = false;
      for (const auto& [child, parent] : perf->process_parent) {
        if (perf->thread_names.count(child)) continue;
        auto it = perf->thread_names.find(parent);
        if (it != perf->thread_names.end()) {
          perf->thread_names[child] = std::string(it->second);
          more = true;
        }
      }
      if (!more) break;
    }
    for (const auto& [tid, pid] : perf->thread_pid) {
      if (tid == pid || perf->thread_names.count(tid)) continue;
      auto it = perf->thread_names.find(pid);
      if (it != perf->thread_names.end()) perf->thread_names[tid] = std::string(it->second);
    }
  }

  // The hook's roles, and the launched or attached process's command line
  // where no hook wrote one (a program that is not Python); a process forked
  // during the capture from one of those without a role of its own is
  // "fork of PPID" with its parent's command line.
  std::map<int64_t, ProcessRole> ProcessNames() const {
    std::map<int64_t, ProcessRole> roles = ProcessNamesOfTargets();
    if (!sampler_) return roles;
    const auto& parents = sampler_->data().process_parent;
    for (int pass = 0; pass < 64; ++pass) {
      bool more = false;
      for (const auto& [child, parent] : parents) {
        if (roles.count(child)) continue;
        auto it = roles.find(parent);
        if (it == roles.end()) continue;
        roles[child] = ProcessRole{"fork of " + std::to_string(parent), it->second.command, it->second.rank,
                                   it->second.world_size};
        more = true;
      }
      if (!more) break;
    }
    return roles;
  }

  // A process forked during the capture without a rank of its own (a
  // DataLoader worker of an mp.spawn rank, whose rank only torch.distributed
  // knows) is on its parent's.
  void InheritRanks(std::map<int64_t, ProcessRole>* roles) const {
    if (!sampler_) return;
    const auto& parents = sampler_->data().process_parent;
    for (int pass = 0; pass < 64; ++pass) {  // a chain of forks, one hop a pass
      bool more = false;
      for (const auto& [child, parent] : parents) {
        auto c = roles->find(child);
        auto p = roles->find(parent);
        if (c == roles->end() || p == roles->end() || c->second.rank != kNoRank || p->second.rank == kNoRank) continue;
        c->second.rank = p->second.rank;
        c->second.world_size = p->second.world_size;
        more = true;
      }
      if (!more) break;
    }
  }

  std::map<int64_t, ProcessRole> ProcessNamesOfTargets() const {
    std::map<int64_t, ProcessRole> roles = ReadProcessRoles(dir_ + "/procs");
    if (child_ > 0 && !roles.count(child_)) {
      ProcessRole& r = roles[child_];
      // The program's name without its folder, its arguments as given (`sh -c
      // '/usr/bin/python3 a.py 0 & ...'` read "sh -c python3 a.py 1; wait":
      // the last '/' of the argument).
      for (const std::string& a : o_.command) {
        r.command += r.command.empty() ? a.substr(a.rfind('/') + 1) : " " + a;
      }
    }
    if (o_.pid > 0 && !roles.count(o_.pid)) {
      std::ifstream in("/proc/" + std::to_string(o_.pid) + "/cmdline", std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      while (!text.empty() && text.back() == '\0') text.pop_back();
      for (char& c : text) c = c == '\0' ? ' ' : c;
      if (!text.empty()) roles[o_.pid].command = text;
    }
    return roles;
  }

  void Describe(Trace* t, const HostStats& s, size_t sdk_files, size_t torch_files) {
    auto& m = t->metadata;
    m["source_format"] = "aiprof_capture";
    m["capture.clock"] = "CLOCK_MONOTONIC";
    m["capture.scope"] = CaptureScopeName(o_.scope);
    m["capture.start_ns"] = std::to_string(start_mono_ns_);
    m["capture.end_ns"] = std::to_string(end_mono_ns_);
    m["capture.realtime_minus_monotonic_ns"] = std::to_string(realtime_minus_mono_ns_);
    m["capture.stop_reason"] = stop_reason_;
    m["capture.cpu_hz"] = std::to_string(o_.cpu_hz);
    m["capture.sampling_rate"] = std::to_string(o_.sampling_rate);
    if (o_.scope != CaptureScope::kApp) m["capture.torch_every"] = std::to_string(o_.torch_every);
    m["capture.unwind"] = o_.unwind == UnwindMode::kAuto ? "auto" : o_.unwind == UnwindMode::kDwarf ? "dwarf" : "fp";
    if (!o_.target.empty()) m["capture.target"] = o_.target;
    if (o_.pid > 0) {
      m["capture.pid"] = std::to_string(o_.pid);
    } else {
      std::string cmd;
      for (const std::string& a : o_.command) cmd += (cmd.empty() ? "" : " ") + a;
      m["capture.command"] = cmd;
      m["capture.child_pid"] = std::to_string(child_);
      m["capture.exit_status"] = std::to_string(exit_code_);
    }
    // Offsets to CLOCK_MONOTONIC: perf uses it directly (attr.use_clockid),
    // the SDK writes it; torch's are measured per file (above).
    m["capture.clock_offset_ns.perf"] = "0";
    m["capture.clock_offset_ns.sdk"] = "0";
    m["capture.clock_offset_ns.proc_counters"] = "0";
    m["capture.host_samples"] = std::to_string(s.samples);
    m["capture.host_samples_dwarf"] = std::to_string(s.dwarf_stacks);
    m["capture.host_samples_fp"] = std::to_string(s.fp_stacks);
    m["capture.host_frames_unsymbolised"] = std::to_string(s.unsymbolised_frames);
    m["capture.host_modules_unreadable"] = std::to_string(s.modules_unreadable);
    m["capture.host_frames_nearest_symbol"] = std::to_string(s.nearest_symbol_frames);
    m["capture.host_samples_with_python_stack"] = std::to_string(s.python_samples);
    m["capture.host_samples_python_sampler"] = std::to_string(s.sampler_samples);
    m["capture.host_stacks_truncated"] = std::to_string(s.truncated_stacks);
    m["capture.host_kernel_samples"] = sampler_ && !sampler_->kernel_excluded() ? "recorded" : "excluded";
    m["capture.host_sampling"] = perf_blocked_ ? "blocked" : o_.cpu_hz <= 0 ? "off" : "on";
    // What a sample's weight_ns is, in the words every importer uses
    // (docs/importers.md "Host CPU samples"): here each sample's own period.
    if (!perf_blocked_ && o_.cpu_hz > 0) {
      m["host_sample_weight_basis"] =
          "each sample's own period: the cpu-clock ns perf counted for it (PERF_SAMPLE_PERIOD)";
    }
    m[kPageFaultsMeta] = !o_.page_faults ? "off" : faults_blocked_ ? "blocked" : "on";
    if (o_.page_faults && !faults_blocked_) {
      m[kPageFaultPeriodMeta] = std::to_string(o_.fault_period);
      m[kPageFaultRecordsMeta] = std::to_string(fault_records_);
      m[kPageFaultLostMeta] = std::to_string(fault_lost_);
      m[kPageFaultKernelMeta] = fault_sampler_ && !fault_sampler_->kernel_excluded() ? "recorded" : "excluded";
    }
    if (o_.page_faults) {
      m[kPageFaultCostMethodMeta] = fault_cost_.ok ? fault_cost_.method : "not measured: " + fault_cost_.error;
      if (fault_cost_.ok) {
        char v[64];
        std::snprintf(v, sizeof(v), "%.1f", fault_cost_.median_ns);
        m[kPageFaultCostMeta] = v;
        std::string runs;
        for (double ns : fault_cost_.runs_ns) {
          std::snprintf(v, sizeof(v), "%.1f", ns);
          runs += (runs.empty() ? "" : ",") + std::string(v);
        }
        m[kPageFaultCostRunsMeta] = runs;
      }
    }
    m[kMallocMeta] = malloc_probed_ ? AllocatorName(malloc_library_) : "unknown";
    if (!malloc_library_.empty()) m[kMallocLibraryMeta] = malloc_library_;
    m[kMallocSettingsMeta] = malloc_settings_;
    m["capture.sdk_files"] = std::to_string(sdk_files);
    m["capture.torch_files"] = std::to_string(torch_files);
    if (counters_) m["capture.nvml"] = counters_->nvml_status();
  }

  const CaptureOptions& o_;
  std::string dir_;
  // The target's malloc (ProbeMalloc) and its allocator settings.
  bool malloc_probed_ = false;
  std::string malloc_library_, malloc_settings_;
  std::string malloc_exe_;  // the launched command's executable when its malloc was probed
  const std::string self_exe_ = ExecutableOf(getpid());  // aiprof's, which a launched command runs until it execs
  pid_t child_ = 0;
  int exit_code_ = 0;
  bool exited_ = false;
  uint64_t vdso_size_ = 0;  // bytes of the vDSO image in dir_/vdso.so (0: none)
  int64_t folder_full_ns_ = 0;      // when the capture folder's file system was first seen full (0: never)
  std::string folder_full_note_;    // it, in words, for the stderr line
  std::string stack_cap_note_;  // StackCapNote(), for the stderr line
  int stop_signal_sent_ = 0;  // the signal Record() passed on to the command (0: none)
  int64_t start_mono_ns_ = 0, end_mono_ns_ = 0, realtime_minus_mono_ns_ = 0;
  std::string stop_reason_ = kTargetExited;
  std::unique_ptr<PerfSampler> sampler_;
  std::unique_ptr<PerfSampler> fault_sampler_;
  bool faults_blocked_ = false;
  std::string faults_error_;
  PageFaultCost fault_cost_;
  uint64_t fault_count_ = 0, fault_records_ = 0, fault_lost_ = 0, perf_lost_ = 0;
  std::unique_ptr<CounterSampler> counters_;
  bool perf_blocked_ = false;
  std::string perf_error_;
  std::vector<Mapping> attach_maps_;
  std::map<int32_t, std::string> attach_names_;
  struct sigaction old_sigint_, old_sigterm_;
  int64_t exec_mono_ns_ = 0;  // when the command was let go (--duration counts from here)
};

}  // namespace

Status CheckCommand(const std::vector<std::string>& command) {
  if (command.empty()) return ErrStatus("aiprof trace: no command given (use -- CMD ARGS... or --pid N)");
  const std::string& name = command[0];
  auto executable = [](const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    if (executable(name)) return OkStatus();
    struct stat st;
    if (::stat(name.c_str(), &st) != 0) return ErrStatus("aiprof trace: cannot run " + name + ": " + std::strerror(errno));
    return ErrStatus("aiprof trace: cannot run " + name + ": not an executable file");
  }
  const char* path_env = std::getenv("PATH");
  std::string path = path_env && *path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = end > start ? path.substr(start, end - start) : ".";
    if (executable(dir + "/" + name)) return OkStatus();
    start = end + 1;
  }
  return ErrStatus("aiprof trace: cannot run " + name + ": no executable of that name in PATH");
}

const char* CaptureScopeName(CaptureScope scope) {
  switch (scope) {
    case CaptureScope::kApp: return "app";
    case CaptureScope::kFramework: return "framework";
    case CaptureScope::kFullStack: return "full_stack";
  }
  return "full_stack";
}

StatusOr<CaptureResult> RunCapture(const CaptureOptions& options) { return Session(options).Run(); }

void ShiftTrace(Trace* t, int64_t delta) {
  for (size_t i = 0; i < t->slices.size(); ++i) t->slices.ts_ns[i] += delta;
  for (size_t i = 0; i < t->instants.size(); ++i) t->instants.ts_ns[i] += delta;
  for (size_t i = 0; i < t->counters.size(); ++i) t->counters.ts_ns[i] += delta;
  for (size_t i = 0; i < t->steps.size(); ++i) t->steps.ts_ns[i] += delta;
  for (size_t i = 0; i < t->samples.size(); ++i) t->samples.ts_ns[i] += delta;
}

Status MeasureTorchOffset(const Trace& torch, const std::string& sync_path, int64_t* offset_ns, int64_t* error_ns) {
  simdjson::padded_string json;
  if (simdjson::padded_string::load(sync_path).get(json) != simdjson::SUCCESS) {
    return ErrStatus(sync_path + ": cannot read the clock-sync file the torch hook writes");
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS) return ErrStatus(sync_path + ": not JSON");
  std::map<std::string, std::pair<int64_t, int64_t>> marks;
  simdjson::dom::array arr;
  if (doc["sync"].get_array().get(arr) != simdjson::SUCCESS) return ErrStatus(sync_path + ": no \"sync\" array");
  for (simdjson::dom::element e : arr) {
    std::string_view name;
    int64_t b = 0, en = 0;
    if (e["name"].get_string().get(name) || e["mono_begin_ns"].get_int64().get(b) || e["mono_end_ns"].get_int64().get(en)) {
      return ErrStatus(sync_path + ": a sync mark lacks name / mono_begin_ns / mono_end_ns");
    }
    marks[std::string(name)] = {b, en};
  }
  // kineto = mono + offset. The op began after mono_begin and ended before
  // mono_end: offset in [op_end - mono_end, op_start - mono_begin]; the
  // profiler's µs rounding widens it by 1 µs each side.
  bool found = false;
  int64_t best_lo = 0, best_hi = 0;
  for (size_t i = 0; i < torch.slices.size(); ++i) {
    auto it = marks.find(std::string(torch.Str(torch.slices.name[i])));
    if (it == marks.end()) continue;
    const int64_t start = torch.slices.ts_ns[i], end = start + torch.slices.dur_ns[i];
    const int64_t lo = end - it->second.second - 1000, hi = start - it->second.first + 1000;
    if (lo > hi) continue;
    if (!found || hi - lo < best_hi - best_lo) {
      best_lo = lo;
      best_hi = hi;
      found = true;
    }
  }
  if (!found) return ErrStatus(sync_path + ": no aiprof::clock_sync# op in the torch trace");
  *offset_ns = best_lo + (best_hi - best_lo) / 2;
  *error_ns = (best_hi - best_lo) / 2;
  return OkStatus();
}

size_t LabelClockSyncMarks(Trace* t) {
  const StringId name = t->strings.Intern(kClockSyncName), category = t->strings.Intern(kAiprofOverheadCategory);
  size_t marked = 0;
  for (size_t i = 0; i < t->slices.size(); ++i) {
    if (!t->Str(t->slices.name[i]).starts_with("aiprof::clock_sync#")) continue;
    t->slices.name[i] = name;
    t->slices.category[i] = category;
    t->slices.kind[i] = ClassifyEvent(kAiprofOverheadCategory, kClockSyncName);
    ++marked;
  }
  return marked;
}

void SampleTopLevelSlices(Trace* t, double rate) {
  const size_t n = t->slices.size();
  std::vector<uint32_t> remap(n, kNoSlice);
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> seen;
  bool keep = true;
  uint32_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (t->slices.depth[i] == 0) {
      const uint64_t k = seen[{t->slices.track[i], t->slices.name[i].raw}]++;
      // Keep the k-th of each (track, name) when floor((k+1)·rate) steps up.
      keep = std::floor(static_cast<double>(k + 1) * rate) > std::floor(static_cast<double>(k) * rate);
    }
    if (keep) remap[i] = kept++;
  }
  Trace out_cols;
  SliceTable& s = out_cols.slices;
  for (size_t i = 0; i < n; ++i) {
    if (remap[i] == kNoSlice) continue;
    s.ts_ns.push_back(t->slices.ts_ns[i]);
    s.dur_ns.push_back(t->slices.dur_ns[i]);
    s.name.push_back(t->slices.name[i]);
    s.category.push_back(t->slices.category[i]);
    s.kind.push_back(t->slices.kind[i]);
    s.track.push_back(t->slices.track[i]);
    s.depth.push_back(t->slices.depth[i]);
    s.correlation.push_back(t->slices.correlation[i]);
    s.arg_begin.push_back(t->slices.arg_begin[i]);
    s.arg_count.push_back(t->slices.arg_count[i]);
  }
  t->slices = std::move(s);
  FlowTable flows;
  for (size_t i = 0; i < t->flows.size(); ++i) {
    uint32_t from = t->flows.from_slice[i], to = t->flows.to_slice[i];
    if (from >= n || to >= n || remap[from] == kNoSlice || remap[to] == kNoSlice) continue;
    flows.from_slice.push_back(SliceId{remap[from]});
    flows.to_slice.push_back(SliceId{remap[to]});
    flows.flow_id.push_back(t->flows.flow_id[i]);
    flows.category.push_back(t->flows.category[i]);
  }
  t->flows = std::move(flows);
  for (size_t i = 0; i < t->op_metrics.size(); ++i) {
    uint32_t s_i = t->op_metrics.slice[i];
    if (s_i < n) t->op_metrics.slice[i] = SliceId{remap[s_i]};
  }
  t->metadata["sampling_rate"] = std::to_string(rate);
}

}  // namespace aiprof
