// End-to-end tests of the tracing SDK: src/sdk/test_programs/c_api_program.c
// (a C program, compiled as C) and cpp_api_program.cc record known patterns under a given environment;
// these tests read the event files it writes through ImportTrace (the SDK's
// importer and TraceBuilder, src/importers/sdk/) and `aiprof summary
// --format json` and check every figure against what
// the program measured with CLOCK_MONOTONIC on its own.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "src/analysis/pipeline/pipeline_stages.h"
#include "src/analysis/summary/request_tokens.h"
#include "src/analysis/summary/summary.h"
#include "src/analysis/validation/trace_samples.h"
#include "src/importers/common/importer_registry.h"
#include "src/monitor/live_client.h"
#include "src/sdk/sdk_internal.h"

namespace aiprof {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

struct Result {
  int exit_code = -1;
  std::string out;
};

// Runs `program args...` with the AIPROF_* variables of `env` only (the
// test's own AIPROF_* are removed), stdout captured.
Result RunProgram(const std::string& program, const std::vector<std::string>& args, const Env& env) {
  char out_path[] = "/tmp/aiprof-sdk-test-out-XXXXXX";
  int out_fd = mkstemp(out_path);
  EXPECT_GE(out_fd, 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, 1);
    for (const char* v : {"AIPROF_OUTPUT", "AIPROF_MODE", "AIPROF_RING_MB", "AIPROF_ENABLE", "AIPROF_CLOCK",
                          "AIPROF_FLUSH_SIGNAL", "AIPROF_SPILL", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"}) {
      unsetenv(v);
    }
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  r.out = ss.str();
  close(out_fd);
  unlink(out_path);
  return r;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/aiprof-sdk-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    DIR* d = opendir(path_.c_str());
    if (d) {
      while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") unlink((path_ + "/" + n).c_str());
      }
      closedir(d);
    }
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::vector<std::string> Files() const {
    std::vector<std::string> files;
    DIR* d = opendir(path_.c_str());
    while (dirent* e = d ? readdir(d) : nullptr) {
      std::string n = e->d_name;
      if (n != "." && n != "..") files.push_back(n);
    }
    if (d) closedir(d);
    std::sort(files.begin(), files.end());
    return files;
  }

 private:
  std::string path_;
};

std::unique_ptr<Trace> Load(const std::string& path) {
  auto trace = ImportTrace(path);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  return trace.ok() ? std::move(trace).value() : nullptr;
}

// Slices named `name`, in file order.
std::vector<uint32_t> SlicesNamed(const Trace& t, std::string_view name) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < t.slices.size(); ++i) {
    if (t.Str(t.slices.name[i]) == name) out.push_back(i);
  }
  return out;
}

std::map<std::string, uint64_t> CountsByName(const Trace& t) {
  std::map<std::string, uint64_t> counts;
  for (size_t i = 0; i < t.slices.size(); ++i) ++counts[std::string(t.Str(t.slices.name[i]))];
  return counts;
}

std::string Meta(const Trace& t, const std::string& key) {
  auto it = t.metadata.find(key);
  return it == t.metadata.end() ? "" : it->second;
}

// Lines of `out` starting with `word`, split on spaces.
std::vector<std::vector<std::string>> Lines(const std::string& out, const std::string& word) {
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<std::string> f;
    std::string x;
    while (ls >> x) f.push_back(x);
    if (!f.empty() && f[0] == word) lines.push_back(f);
  }
  return lines;
}

// 8 threads x 1,000,000 spans: every span is in the file, and `aiprof
// summary --format json` counts exactly 8,000,000.
TEST(SdkScale, EightThreadsMillionSpansLoseNothing) {
  TempDir dir;
  std::string file = dir.path() + "/threads.aiprof";
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"threads", "8", "1000000"}, {{"AIPROF_OUTPUT", file}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto trace = Load(file);
  ASSERT_NE(trace, nullptr);
  EXPECT_EQ(trace->slices.size(), 8000000u);
  EXPECT_EQ(Meta(*trace, "sdk.events_recorded"), "16000000");
  EXPECT_EQ(Meta(*trace, "sdk.events_written"), "16000000");
  size_t thread_tracks = 0;
  for (size_t i = 0; i < trace->tracks.size(); ++i) thread_tracks += trace->tracks.kind[i] == TrackKind::kThread;
  EXPECT_EQ(thread_tracks, 8u);
  trace.reset();

  std::string json_path = dir.path() + "/summary.json";
  std::string cmd = std::string(AIPROF_CLI) + " summary --format json " + file + " > " + json_path;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(json_path).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(uint64_t(doc["totals"]["slices"]), 8000000u);
  bool found = false;
  for (simdjson::dom::element op : doc["ops"].get_array()) {
    if (std::string_view(op["name"]) != "work") continue;
    found = true;
    EXPECT_EQ(uint64_t(op["count"]), 8000000u);
    EXPECT_EQ(std::string_view(op["category"]), "user_annotation");
  }
  EXPECT_TRUE(found);
}

// The file is streamed to the disk as it is written (each 1 MiB's writeback
// started at once, the one before waited for and dropped from the page
// cache), so right after the write at most its first page (the magic,
// written last) is in memory. Before, every page of the file stayed in
// memory, dirty until the final fsync wrote them all: the kernel throttled
// every process that dirtied pages meanwhile, the recording threads too, and
// a second flush found the first one's writeback in its way
// (bench/sdk_flush_cost.py; docs/sdk.md, "Flush cost"). Checked with
// mincore(2), so no timing.
TEST(SdkFile, WrittenFileDoesNotStayInMemory) {
  TempDir dir;
  struct statfs fs;
  ASSERT_EQ(statfs(dir.path().c_str(), &fs), 0);
  if (fs.f_type == 0x01021994 || fs.f_type == 0x858458f6) {  // tmpfs, ramfs: the page cache is the file
    GTEST_SKIP() << dir.path() << " is in memory";
  }
  const std::string file = dir.path() + "/threads.aiprof";
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"threads", "2", "100001"}, {{"AIPROF_OUTPUT", file}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  int fd = open(file.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t pages = (static_cast<size_t>(st.st_size) + page - 1) / page;
  ASSERT_GT(pages, 1000u);  // 400,004 events of 16 bytes: 6.4 MB
  void* map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  std::vector<unsigned char> resident(pages);
  ASSERT_EQ(mincore(map, static_cast<size_t>(st.st_size), resident.data()), 0);
  size_t in_memory = 0;
  for (unsigned char v : resident) in_memory += v & 1;
  munmap(map, static_cast<size_t>(st.st_size));
  close(fd);
  EXPECT_LE(in_memory, 2u) << "of " << pages << " pages";
  auto trace = Load(file);  // and the file is whole
  ASSERT_NE(trace, nullptr);
  EXPECT_EQ(trace->slices.size(), 200002u);
  EXPECT_EQ(trace->diagnostics.entries().size(), 0u);
}

// The same on a scale the sanitizer pass runs: 4 threads x 20,000, the
// program linked statically with the C linker (no libstdc++).
TEST(SdkFile, ThreadsStaticLinkLoseNothing) {
  TempDir dir;
  std::string file = dir.path() + "/threads.aiprof";
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM_STATIC, {"threads", "4", "20000"}, {{"AIPROF_OUTPUT", file}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto trace = Load(file);
  ASSERT_NE(trace, nullptr);
  Summary s = ComputeSummary(*trace);
  ASSERT_EQ(s.ops.size(), 1u);
  EXPECT_EQ(trace->Str(s.ops[0].name), "work");
  EXPECT_EQ(s.ops[0].count, 80000u);
  EXPECT_EQ(trace->diagnostics.entries().size(), 0u);
}

// Nested spans around busy-waits: each span lasts at least its busy time and
// at most what the program measured around it (both clocks CLOCK_MONOTONIC;
// the SDK's TSC readings are calibrated against it), for TSC and fallback.
void CheckBusy(const char* clock) {
  TempDir dir;
  std::string file = dir.path() + "/busy.aiprof";
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"busy"}, {{"AIPROF_OUTPUT", file}, {"AIPROF_CLOCK", clock}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto trace = Load(file);
  ASSERT_NE(trace, nullptr);
  for (const char* name : {"outer", "inner"}) {
    std::vector<uint32_t> slices = SlicesNamed(*trace, name);
    auto measured = Lines(r.out, name);
    ASSERT_EQ(slices.size(), 5u);
    ASSERT_EQ(measured.size(), 5u);
    for (size_t i = 0; i < 5; ++i) {
      int64_t dur = trace->slices.dur_ns[slices[i]];
      int64_t nominal = std::stoll(measured[i][1]), outside = std::stoll(measured[i][2]);
      // 1 us covers the rounding of the tick rate over a few ms.
      EXPECT_GE(dur, nominal) << name << " " << i;
      EXPECT_LE(dur, outside + 1000) << name << " " << i;
      EXPECT_EQ(trace->slices.depth[slices[i]], std::string(name) == "outer" ? 0 : 1);
    }
  }
  if (std::string(clock) == "monotonic") {
    EXPECT_EQ(Meta(*trace, "sdk.clock"), "monotonic");
  }
}

TEST(SdkFile, BusyWaitDurationsTsc) { CheckBusy("tsc"); }
TEST(SdkFile, BusyWaitDurationsMonotonicFallback) { CheckBusy("monotonic"); }

TEST(SdkFile, IterationsBecomeSteps) {
  TempDir dir;
  std::string file = dir.path() + "/steps.aiprof";
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"steps", "6"}, {{"AIPROF_OUTPUT", file}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto trace = Load(file);
  ASSERT_NE(trace, nullptr);
  auto measured = Lines(r.out, "step");
  ASSERT_EQ(trace->steps.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(trace->steps.number[i], static_cast<int64_t>(i));
    EXPECT_EQ(trace->Str(trace->steps.name[i]), "ProfilerStep#" + std::to_string(i));
    EXPECT_GE(trace->steps.dur_ns[i], 200000);
    EXPECT_LE(trace->steps.dur_ns[i], std::stoll(measured[i][2]) + 1000);
  }
  // Each step encloses its "forward" span.
  std::vector<uint32_t> forward = SlicesNamed(*trace, "forward");
  ASSERT_EQ(forward.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(trace->slices.depth[forward[i]], 1);
    EXPECT_GE(trace->slices.ts_ns[forward[i]], trace->steps.ts_ns[i]);
  }
  Summary s = ComputeSummary(*trace);
  EXPECT_EQ(s.steps.size(), 6u);
  // `aiprof validate` takes the steps as samples (all of them: with the
  // automatic warm-up detection a first step slowed by a loaded machine
  // would be left out, which is not what this test is about).
  TraceSampleOptions keep_all;
  keep_all.warmup_steps = 0;
  auto samples = SamplesFromTrace(*trace, "run", keep_all);
  ASSERT_TRUE(samples.ok()) << samples.status().message();
  EXPECT_EQ(samples->latency_ns.size(), 6u);
}

// Requests begun on "frontend" and ended on "backend": latency within the
// program's own bounds, a flow from node:recv to node:reply, validate's
// --unit request samples, and node-bottleneck's stages.
TEST(SdkFile, CrossThreadRequests) {
  TempDir dir;
  std::string file = dir.path() + "/requests.aiprof";
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"requests", "8"}, {{"AIPROF_OUTPUT", file}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto trace = Load(file);
  ASSERT_NE(trace, nullptr);
  auto measured = Lines(r.out, "request");
  ASSERT_EQ(measured.size(), 8u);
  std::vector<uint32_t> requests = SlicesNamed(*trace, "request");
  ASSERT_EQ(requests.size(), 8u);
  std::map<uint64_t, uint32_t> by_id;
  for (uint32_t s : requests) {
    ASSERT_EQ(trace->slices.arg_count[s], 1);
    const Arg& a = trace->args[trace->slices.arg_begin[s]];
    EXPECT_EQ(trace->Str(a.key), "id");
    by_id[a.u] = s;
    EXPECT_EQ(trace->tracks.kind[trace->slices.track[s]], TrackKind::kSpans);
    EXPECT_EQ(trace->tracks.layer[trace->slices.track[s]], Layer::kApplication);
  }
  for (const auto& m : measured) {
    uint64_t id = std::stoull(m[1]);
    ASSERT_TRUE(by_id.count(id)) << id;
    int64_t dur = trace->slices.dur_ns[by_id[id]];
    EXPECT_GE(dur, std::stoll(m[2]) - 1000) << id;
    EXPECT_LE(dur, std::stoll(m[3]) + 1000) << id;
    EXPECT_GE(dur, 1000000) << id;  // the backend's 1 ms busy-wait lies inside
  }
  // Flows: node:recv on the frontend -> node:reply on the backend, one per request.
  ASSERT_EQ(trace->flows.size(), 8u);
  for (size_t i = 0; i < trace->flows.size(); ++i) {
    uint32_t from = trace->flows.from_slice[i], to = trace->flows.to_slice[i];
    EXPECT_EQ(trace->Str(trace->slices.name[from]), "node:recv");
    EXPECT_EQ(trace->Str(trace->slices.name[to]), "node:reply");
    EXPECT_EQ(trace->Str(trace->tracks.name[trace->slices.track[from]]), "frontend");
    EXPECT_EQ(trace->Str(trace->tracks.name[trace->slices.track[to]]), "backend");
    EXPECT_EQ(trace->Str(trace->flows.category[i]), "request");
  }
  TraceSampleOptions options;
  options.unit = "request";
  auto samples = SamplesFromTrace(*trace, "run", options);
  ASSERT_TRUE(samples.ok()) << samples.status().message();
  EXPECT_EQ(samples->latency_ns.size(), 8u);
  PipelineResult pipeline = ComputePipelineStages(*trace);
  std::map<std::string, uint64_t> instances;
  for (const PipelineStage& st : pipeline.stages) instances[st.name] = st.instances;
  EXPECT_EQ(instances["recv"], 8u);
  EXPECT_EQ(instances["reply"], 8u);
  bool flow_edge = false;
  for (const StageEdge& e : pipeline.edges) {
    flow_edge |= e.kind == StageEdgeKind::kFlow && pipeline.stages[e.from].name == "recv" &&
                 pipeline.stages[e.to].name == "reply" && e.count == 8;
  }
  EXPECT_TRUE(flow_edge);
  EXPECT_EQ(Meta(*trace, "sdk.requests_in_flight"), "0");

  // The CLI reads the requests as latency samples.
  std::string report = dir.path() + "/validate.json";
  std::string cmd = std::string(AIPROF_CLI) + " validate --before " + file + " --after " + file +
                    " --unit request --metrics latency -o " + report + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(report);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("span 'request'"), std::string::npos) << text.str().substr(0, 2000);
}

// AIPROF_RING_MB=1: 65536 events of 16 bytes per thread. The main thread
// recorded 1 + 100000 spans (200002 events): exactly its newest 65536 events,
// 32768 spans from "first_kept" on, are written; the worker's 10 all are.
TEST(SdkFile, RingKeepsExactlyTheNewestEvents) {
  TempDir dir;
  std::string file = dir.path() + "/ring.aiprof";
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"ring", "100000"},
                 {{"AIPROF_OUTPUT", file}, {"AIPROF_MODE", "ring"}, {"AIPROF_RING_MB", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto trace = Load(file);
  ASSERT_NE(trace, nullptr);
  auto counts = CountsByName(*trace);
  EXPECT_EQ(counts["first_kept"], 1u);
  EXPECT_EQ(counts.count("last_dropped"), 0u);
  EXPECT_EQ(counts.count("old"), 0u);
  EXPECT_EQ(counts["ring"], 32767u);
  EXPECT_EQ(counts["small"], 10u);
  EXPECT_EQ(Meta(*trace, "sdk.mode"), "ring");
  EXPECT_EQ(Meta(*trace, "sdk.events_written"), std::to_string(65536 + 20));
  EXPECT_EQ(Meta(*trace, "sdk.events_overwritten"), std::to_string(200002 - 65536));
  // "first_kept" is the oldest span of the main thread's track.
  std::vector<uint32_t> first = SlicesNamed(*trace, "first_kept");
  ASSERT_EQ(first.size(), 1u);
  uint32_t track = trace->slices.track[first[0]];
  for (size_t i = 0; i < trace->slices.size(); ++i) {
    if (trace->slices.track[i] != track) continue;
    EXPECT_GE(trace->slices.ts_ns[i], trace->slices.ts_ns[first[0]]);
  }
  EXPECT_EQ(trace->diagnostics.entries().size(), 0u);
}

// Thread churn (a thread-per-request server): 10,000 threads, 4 at a time,
// each naming itself and recording one span. Exited threads' buffers are
// reused, so memory does not grow with the number of threads (before, each
// thread kept 64 KiB: 600 MB here); every thread is still its own track.
void CheckChurn(const Env& env, bool ring) {
  TempDir dir;
  std::string file = dir.path() + "/churn.aiprof";
  Env full = env;
  full.push_back({"AIPROF_OUTPUT", file});
  // Under AddressSanitizer freed blocks wait in its quarantine (up to 256 MiB),
  // which RSS would count as the SDK's: the program runs without it (the
  // option means nothing to an uninstrumented build).
  const char* asan = std::getenv("ASAN_OPTIONS");
  full.push_back({"ASAN_OPTIONS", std::string(asan ? asan : "") + ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0"});
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"churn", "10000", "4"}, full);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto rss = Lines(r.out, "rss_kb");
  ASSERT_EQ(rss.size(), 1u) << r.out;
  int64_t warm_kb = std::stoll(rss[0][1]), end_kb = std::stoll(rss[0][2]);
  ASSERT_GT(warm_kb, 0);
  // Record mode keeps 5 events (80 bytes) per thread: 760 KiB after warm-up.
  EXPECT_LT(end_kb - warm_kb, 4096) << "VmRSS after 500 threads " << warm_kb << " KiB, after 10,000 " << end_kb;
  auto trace = Load(file);
  ASSERT_NE(trace, nullptr);
  std::map<std::string, size_t> spans_by_track;
  std::vector<uint32_t> churn = SlicesNamed(*trace, "churn");
  for (uint32_t s : churn) {
    spans_by_track[std::string(trace->Str(trace->tracks.name[trace->slices.track[s]]))] += 1;
  }
  for (const auto& [name, n] : spans_by_track) {
    EXPECT_EQ(n, 1u) << name;
    EXPECT_EQ(name.rfind("churn-", 0), 0u) << name;
  }
  EXPECT_EQ(spans_by_track.count("churn-9999"), 1u);
  EXPECT_EQ(trace->diagnostics.entries().size(), 0u);
  if (!ring) {
    EXPECT_EQ(churn.size(), 10000u);
    EXPECT_EQ(spans_by_track.size(), 10000u);
    EXPECT_EQ(Meta(*trace, "sdk.events_recorded"), "20000");
    EXPECT_EQ(Meta(*trace, "sdk.threads"), "10000");
  } else {
    // Rings of 655 events, 5 per thread (span begin and end, the exit
    // marker and a 10-character name): the buffer reused last holds its
    // newest 131 threads, the others what they held when they went idle.
    EXPECT_GT(churn.size(), 130u);
    EXPECT_LT(churn.size(), 10000u);
    EXPECT_EQ(Meta(*trace, "sdk.events_recorded"), "20000");
  }
}

TEST(SdkFile, ThreadChurnRecordModeMemoryBounded) { CheckChurn({}, false); }
TEST(SdkFile, ThreadChurnRingModeMemoryBounded) {
  CheckChurn({{"AIPROF_MODE", "ring"}, {"AIPROF_RING_MB", "0.01"}}, true);
}

// Starts `program args...` with `env` (AIPROF_* of the test removed).
pid_t Spawn(const std::string& program, const std::vector<std::string>& args, const Env& env) {
  pid_t pid = fork();
  if (pid == 0) {
    for (const char* v : {"AIPROF_OUTPUT", "AIPROF_MODE", "AIPROF_LIVE", "AIPROF_LIVE_SIGNALS", "AIPROF_ENABLE"}) unsetenv(v);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// A monitor attached to a service that is killed by SIGTERM: the SDK notes
// the signal in the live channel and the default action still ends the
// process; a program's own handler is never replaced; AIPROF_LIVE_SIGNALS=0
// turns the note off.
struct SignalOutcome {
  int wait_status = 0;
  int noted = -1;
};
SignalOutcome KillAttached(const std::vector<std::string>& args, const Env& extra) {
  TempDir dir;
  Env env = extra;
  env.push_back({"AIPROF_OUTPUT", dir.path() + "/"});
  env.push_back({"AIPROF_MODE", "ring"});
  pid_t pid = Spawn(AIPROF_SDK_TEST_PROGRAM, args, env);
  SignalOutcome out;
  auto client = LiveClient::Create(pid);
  EXPECT_TRUE(client.ok()) << client.status().message();
  if (client.ok()) {
    Status attached = (*client)->WaitAttached(10'000'000'000, [] { return true; });
    EXPECT_TRUE(attached.ok()) << attached.message();
    // The SDK attaches from a load-time constructor, before main() installs
    // the program's own handler; its requests start after that, so a
    // request seen on the live channel orders the two (a fixed sleep did
    // not, on a starved machine). Then a few more requests while attached.
    uint64_t seen = 0;
    for (int i = 0; i < 10'000 && seen == 0 && attached.ok(); ++i) {
      (*client)->Drain([&seen](const live::Record& r) { seen += r.type == live::kRecRequest; });
      if (seen == 0) usleep(1000);
    }
    EXPECT_GT(seen, 0u) << "no request from the program within 10 s";
  }
  usleep(20000);
  kill(pid, SIGTERM);
  waitpid(pid, &out.wait_status, 0);
  if (client.ok()) out.noted = (*client)->fatal_signal();
  return out;
}

TEST(SdkLive, FatalSignalIsNotedAndTheDefaultActionHappens) {
  SignalOutcome o = KillAttached({"serve", "20"}, {});
  EXPECT_TRUE(WIFSIGNALED(o.wait_status) && WTERMSIG(o.wait_status) == SIGTERM) << o.wait_status;
  EXPECT_EQ(o.noted, SIGTERM);
}

TEST(SdkLive, OwnSignalHandlerIsKept) {
  SignalOutcome o = KillAttached({"serve", "20", "own"}, {});
  EXPECT_TRUE(WIFEXITED(o.wait_status) && WEXITSTATUS(o.wait_status) == 7) << o.wait_status;
  EXPECT_EQ(o.noted, 0);
}

TEST(SdkLive, SignalNoteCanBeTurnedOff) {
  SignalOutcome o = KillAttached({"serve", "20"}, {{"AIPROF_LIVE_SIGNALS", "0"}});
  EXPECT_TRUE(WIFSIGNALED(o.wait_status) && WTERMSIG(o.wait_status) == SIGTERM) << o.wait_status;
  EXPECT_EQ(o.noted, 0);
}

// The live segment's file replaced by another of the same name while the
// old one stays valid (a new monitor's, no detach on the old mapping, its
// heartbeat fresh): the SDK leaves the old mapping for the new file. It
// checked the path only (access()), so it stayed on the old mapping and the
// new monitor never saw it attach.
TEST(SdkLive, ASegmentReplacedUnderItsNameIsLeftForTheNewOne) {
  TempDir dir;
  pid_t pid =
      Spawn(AIPROF_SDK_TEST_PROGRAM, {"serve", "20"}, {{"AIPROF_OUTPUT", dir.path() + "/"}, {"AIPROF_MODE", "ring"}});
  auto first = LiveClient::Create(pid);
  ASSERT_TRUE(first.ok()) << first.status().message();
  Status attached = (*first)->WaitAttached(10'000'000'000, [] { return true; });
  ASSERT_TRUE(attached.ok()) << attached.message();
  // The old file moves aside (still mapped, still heartbeating); a new one
  // takes its name at once.
  const std::string path = (*first)->segment_path(), aside = path + ".aside";
  ASSERT_EQ(rename(path.c_str(), aside.c_str()), 0);
  auto second = LiveClient::Create(pid);
  ASSERT_TRUE(second.ok()) << second.status().message();
  // Well inside the old heartbeat's 10 s life (a stale one detaches anyway).
  Status moved = (*second)->WaitAttached(3'000'000'000, [&] {
    (*first)->Heartbeat();
    return true;
  });
  EXPECT_TRUE(moved.ok()) << moved.message();
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  unlink(aside.c_str());
}

// Whether `pid` maps its live segment (the SDK attached), from its maps.
bool MapsLiveSegment(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  const std::string name = "/dev/shm/aiprof-live-" + std::to_string(pid);
  for (std::string line; std::getline(maps, line);)
    if (line.find(name) != std::string::npos) return true;
  return false;
}

// The monitor's heartbeat gone stale under an SDK that stays (a monitor
// stopped for more than 10 s): the SDK detaches, and attaches again to the
// same segment once the heartbeat is fresh. Its counters keep their slots in
// the segment's name table, the two names cut to the same 59 bytes each its
// own; every re-attach wrote each name again, until the 64 slots were full
// and every counter was dropped (trial_races B).
TEST(SdkLive, AttachingAgainKeepsTheCounterNamesSlots) {
  TempDir dir;
  pid_t pid =
      Spawn(AIPROF_SDK_TEST_PROGRAM, {"serve", "30"}, {{"AIPROF_OUTPUT", dir.path() + "/"}, {"AIPROF_MODE", "ring"}});
  auto client = LiveClient::Create(pid);
  ASSERT_TRUE(client.ok()) << client.status().message();
  ASSERT_TRUE((*client)->WaitAttached(10'000'000'000, [] { return true; }).ok());
  const int fd = open((*client)->segment_path().c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  void* p = mmap(nullptr, live::kHeaderBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  ASSERT_NE(p, MAP_FAILED);
  auto* h = static_cast<live::Header*>(p);
  // The slot of each counter (by its value: "served" >= 1, the long names
  // -1 and -2) among the records that ended after `since`.
  auto slots_after = [&](int64_t since) {
    std::map<int, std::set<uint32_t>> slots;  // -1, -2, or 1 for "served"
    for (int i = 0; i < 10'000 && slots.size() < 3; ++i) {
      (*client)->Drain([&](const live::Record& r) {
        if (r.type != live::kRecCounter || r.end_ns <= since) return;
        double v;
        std::memcpy(&v, &r.value, sizeof(v));
        slots[v >= 1 ? 1 : static_cast<int>(v)].insert(r.aux);
      });
      if (slots.size() < 3) usleep(1000);
    }
    return slots;
  };
  const std::map<int, std::set<uint32_t>> before = slots_after(0);
  ASSERT_EQ(before.size(), 3u) << "the program's three counters within 10 s";
  EXPECT_EQ(__atomic_load_n(&h->counter_names_used, __ATOMIC_ACQUIRE), 3u);
  // Stale by 11 s: the SDK detaches within its 20 ms poll (its mapping of
  // the segment goes); once the heartbeat is fresh again it attaches again
  // within its 250 ms poll (a new attached_ns).
  ASSERT_TRUE(MapsLiveSegment(pid));
  const int64_t first_attach = __atomic_load_n(&h->attached_ns, __ATOMIC_ACQUIRE);
  __atomic_store_n(&h->heartbeat_ns, sdkrt::MonotonicNs() - 11'000'000'000, __ATOMIC_RELEASE);
  bool detached = false;
  for (int i = 0; i < 10'000 && !detached; ++i) {
    usleep(1000);
    detached = !MapsLiveSegment(pid);
  }
  ASSERT_TRUE(detached) << "the SDK did not detach from a stale heartbeat within 10 s";
  (*client)->Heartbeat();
  int64_t again = first_attach;
  for (int i = 0; i < 10'000 && again == first_attach; ++i) {
    usleep(1000);
    again = __atomic_load_n(&h->attached_ns, __ATOMIC_ACQUIRE);
  }
  ASSERT_NE(again, first_attach) << "the SDK did not attach again within 10 s";
  const int64_t settled = sdkrt::MonotonicNs();
  const std::map<int, std::set<uint32_t>> after = slots_after(settled);
  EXPECT_EQ(after, before) << "each counter keeps its slot";
  EXPECT_EQ(__atomic_load_n(&h->counter_names_used, __ATOMIC_ACQUIRE), 3u) << "no name written twice";
  EXPECT_EQ(__atomic_load_n(&h->counter_samples_dropped, __ATOMIC_RELAXED), 0u);
  munmap(p, live::kHeaderBytes);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

TEST(SdkFile, DisabledWritesNothing) {
  for (const Env& env : {Env{{"AIPROF_ENABLE", "0"}}, Env{{"AIPROF_MODE", "off"}}}) {
    TempDir dir;
    Env e = env;
    e.emplace_back("AIPROF_OUTPUT", dir.path() + "/");
    Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"api", dir.path() + "/explicit.aiprof"}, e);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("enabled 0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("request_id_nonzero 0"), std::string::npos) << r.out;
    EXPECT_TRUE(dir.Files().empty()) << dir.Files().size() << " files written";
  }
}

// A fork()ed child writes its own file (aiprof-<pid>.aiprof in the output
// folder) holding only its own events; the parent's file has none of them.
TEST(SdkFile, ForkedChildWritesItsOwnFile) {
  TempDir dir;
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"fork"}, {{"AIPROF_OUTPUT", dir.path() + "/"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto child = Lines(r.out, "child"), parent = Lines(r.out, "parent");
  ASSERT_EQ(child.size(), 1u);
  ASSERT_EQ(parent.size(), 1u);
  EXPECT_EQ(child[0][2], dir.path() + "/aiprof-" + child[0][1] + ".aiprof");
  EXPECT_EQ(parent[0][2], dir.path() + "/aiprof-" + parent[0][1] + ".aiprof");
  EXPECT_EQ(dir.Files().size(), 2u);
  auto child_trace = Load(child[0][2]);
  auto parent_trace = Load(parent[0][2]);
  ASSERT_NE(child_trace, nullptr);
  ASSERT_NE(parent_trace, nullptr);
  EXPECT_EQ(CountsByName(*child_trace), (std::map<std::string, uint64_t>{{"child", 3}}));
  EXPECT_EQ(CountsByName(*parent_trace), (std::map<std::string, uint64_t>{{"parent_after", 1}, {"parent_before", 1}}));
  EXPECT_EQ(Meta(*child_trace, "pid"), child[0][1]);
  EXPECT_EQ(parent_trace->tracks.pid[0], std::stoll(parent[0][1]));
}

// Forks while another thread records into spill chunks: the chunks are
// shared with the parent, which links new ones after the fork; the child's
// fork handler followed such a link and crashed (SIGSEGV in most children).
TEST(SdkFile, ForkWhileAnotherThreadRecordsKeepsTheChildAlive) {
  TempDir dir;
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"fork_busy", "20"}, {{"AIPROF_OUTPUT", dir.path() + "/"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("children 20 failed 0"), std::string::npos) << r.out;
}

// A fork()ed child that leaves by _exit() (no atexit, as Python's os._exit or
// a DataLoader worker) never writes its event file; its spill file
// (aiprof-<pid>.aiprof.part, the buffers themselves mapped from a file) holds
// every event it recorded, on both of its threads, with names journaled by
// address (a literal, an interned string), counters and a request.
TEST(SdkFile, ForkedChildLeavingByExitKeepsItsEvents) {
  TempDir dir;
  constexpr long kSpans = 10000;  // several chunks per thread (the first holds 4,088 events)
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"fork_exit", std::to_string(kSpans)},
                        {{"AIPROF_OUTPUT", dir.path() + "/"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto child = Lines(r.out, "child"), parent = Lines(r.out, "parent");
  ASSERT_EQ(child.size(), 1u);
  ASSERT_EQ(parent.size(), 1u);
  const std::string child_spill = "aiprof-" + child[0][1] + ".aiprof.part";
  const std::string parent_file = "aiprof-" + parent[0][1] + ".aiprof";
  EXPECT_EQ(dir.Files(), (std::vector<std::string>{std::min(child_spill, parent_file), std::max(child_spill, parent_file)}));
  auto c = Load(dir.path() + "/" + child_spill);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(CountsByName(*c), (std::map<std::string, uint64_t>{{"child_odd", kSpans / 2},
                                                                {"child_request", 1},
                                                                {"child_worker", kSpans},
                                                                {"dyn_42", kSpans / 2}}));
  EXPECT_EQ(c->counters.size(), static_cast<size_t>(kSpans));
  EXPECT_EQ(Meta(*c, "pid"), child[0][1]);
  EXPECT_EQ(Meta(*c, "sdk.source"), "spill");
  EXPECT_EQ(Meta(*c, "sdk.names_unresolved"), "0");
  EXPECT_EQ(Meta(*c, "sdk.open_spans"), "1");  // "left_open"
  auto diags = c->diagnostics.entries();
  ASSERT_TRUE(diags.count("sdk_stream_unterminated"));
  EXPECT_EQ(diags.at("sdk_stream_unterminated").count, 1u);
  EXPECT_FALSE(diags.count("sdk_spill_incomplete"));
  // The worker thread exited before _exit: its own track, named as it named itself.
  std::map<std::string, uint64_t> per_thread;
  for (uint32_t i = 0; i < c->slices.size(); ++i) {
    if (c->Str(c->slices.name[i]) == "child_worker") ++per_thread[std::string(c->Str(c->tracks.name[c->slices.track[i]]))];
  }
  EXPECT_EQ(per_thread, (std::map<std::string, uint64_t>{{"child-worker", kSpans}}));
  auto p = Load(dir.path() + "/" + parent_file);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(CountsByName(*p), (std::map<std::string, uint64_t>{{"parent_after", 1}, {"parent_before", 1}}));
  EXPECT_EQ(Meta(*p, "sdk.source"), "");
}

// A process killed by SIGKILL keeps every event it had written to its
// mapping: the spill file is read up to the last whole event.
TEST(SdkFile, KilledProcessKeepsWhatItRecorded) {
  for (const char* clock : {"tsc", "monotonic"}) {
    TempDir dir;
    constexpr long kSpans = 50000;
    Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"kill", std::to_string(kSpans)},
                          {{"AIPROF_OUTPUT", dir.path() + "/"}, {"AIPROF_CLOCK", clock}});
    ASSERT_EQ(r.exit_code, 128 + SIGKILL) << r.out;
    auto pid = Lines(r.out, "pid");
    ASSERT_EQ(pid.size(), 1u);
    EXPECT_EQ(dir.Files(), (std::vector<std::string>{"aiprof-" + pid[0][1] + ".aiprof.part"}));
    auto t = Load(dir.path() + "/aiprof-" + pid[0][1] + ".aiprof.part");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(CountsByName(*t), (std::map<std::string, uint64_t>{{"before_kill", kSpans}})) << clock;
    ASSERT_EQ(t->instants.size(), 1u);
    EXPECT_EQ(t->Str(t->instants.name[0]), "last_mark");
    EXPECT_EQ(t->diagnostics.entries().at("sdk_stream_unterminated").count, 1u);
  }
}

// A process killed in the middle of writing its file (here by SIGXFSZ: a
// file-size limit below the file's size) leaves its temporary file beside
// its earlier whole file and its spill file. The folder still loads, from
// the spill file: the temporary file does not pass for an event file (its
// magic is written last). Before, the folder failed to load: "corrupt SDK
// event file at byte ...: a thread's events run past the end of the file",
// naming the temporary file.
TEST(SdkFile, ProcessKilledWhileWritingItsFileLeavesALoadableFolder) {
  TempDir dir;
  constexpr long kSpans = 20000;  // 640 KB of events per half, past the 256 KiB limit
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"kill_writing", std::to_string(kSpans)},
                        {{"AIPROF_OUTPUT", dir.path() + "/"}});
  ASSERT_EQ(r.exit_code, 128 + SIGXFSZ) << r.out;
  auto pid = Lines(r.out, "pid");
  ASSERT_EQ(pid.size(), 1u);
  const std::string base = "aiprof-" + pid[0][1] + ".aiprof";
  std::vector<std::string> files = dir.Files();
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0], base);
  EXPECT_EQ(files[1], base + ".part");
  EXPECT_EQ(files[2].rfind(base + ".tmp.", 0), 0u) << files[2];
  EXPECT_FALSE(ImportTrace(dir.path() + "/" + files[2]).ok());  // not an event file, whole or not
  auto t = Load(dir.path());
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(CountsByName(*t), (std::map<std::string, uint64_t>{{"first_half", kSpans}, {"second_half", kSpans}}));
  EXPECT_EQ(Meta(*t, "sdk.source"), "spill");
  // The earlier flush's file is whole.
  auto first = Load(dir.path() + "/" + base);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(CountsByName(*first), (std::map<std::string, uint64_t>{{"first_half", kSpans}}));
}

// The first 8 characters of this boot's id, as the SDK names its temporary files.
std::string BootId8() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  in >> id;
  return id.substr(0, 8);
}

// A pid that no process has now: a child that has exited and been reaped.
pid_t DeadPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

// A job its scheduler restarts every few hours, killed (SIGKILL) in the
// middle of a write: the next process that writes into the folder removes
// the temporary file the killed one left (its name says this boot and a pid
// no process has). Before, nothing removed it: each kill left a file as large
// as the write it cut short, and the folder filled.
TEST(SdkFile, NextProcessRemovesTheTempFileOfAWriterKilledMidWrite) {
  TempDir dir;
  constexpr long kSpans = 20000;  // 640 KB of events per half, past the 256 KiB limit
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"sigkill_writing", std::to_string(kSpans)},
                        {{"AIPROF_OUTPUT", dir.path() + "/"}});
  ASSERT_EQ(r.exit_code, 128 + SIGKILL) << r.out;
  auto pid = Lines(r.out, "pid");
  ASSERT_EQ(pid.size(), 1u);
  const std::string base = "aiprof-" + pid[0][1] + ".aiprof";
  std::vector<std::string> files = dir.Files();
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0], base);
  EXPECT_EQ(files[1], base + ".part");
  const std::string tmp_prefix = base + ".tmp." + BootId8() + "-" + pid[0][1] + ".";
  EXPECT_EQ(files[2].rfind(tmp_prefix, 0), 0u) << files[2];
  struct stat st;
  ASSERT_EQ(stat((dir.path() + "/" + files[2]).c_str(), &st), 0);
  EXPECT_GT(st.st_size, 0);  // cut short in its write
  // The restarted job: a new pid, the same folder.
  Result next = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"steps", "1"}, {{"AIPROF_OUTPUT", dir.path() + "/"}});
  ASSERT_EQ(next.exit_code, 0) << next.out;
  files = dir.Files();
  ASSERT_EQ(files.size(), 3u) << files.back();
  EXPECT_EQ(files[0], base);
  EXPECT_EQ(files[1], base + ".part");
  EXPECT_EQ(files[2].rfind("aiprof-", 0), 0u);
  EXPECT_EQ(files[2].find(".tmp."), std::string::npos) << files[2];
  auto t = Load(dir.path() + "/" + base + ".part");  // what the killed process recorded is still there
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(CountsByName(*t).at("second_half"), static_cast<uint64_t>(kSpans));
}

// A writer that is alive keeps its temporary file: another process writing
// into the folder meanwhile leaves it alone.
TEST(SdkFile, ALiveWritersTempFileIsKept) {
  TempDir dir;
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"held_writer", "20000"}, {{"AIPROF_OUTPUT", dir.path() + "/"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto child = Lines(r.out, "child");
  ASSERT_EQ(child.size(), 1u) << r.out;
  EXPECT_EQ(child[0][1], "0");
  auto tmp = Lines(r.out, "tmp");
  ASSERT_EQ(tmp.size(), 1u) << r.out;  // the held writer's, after the other process wrote
  EXPECT_NE(tmp[0][1].find(".tmp." + BootId8() + "-"), std::string::npos) << tmp[0][1];
}

// Which leftovers a write removes, on hand-made files: only the SDK's own
// temporary files (its naming, no magic, the header of an event file or
// nothing yet), unlocked, and either written on this boot by a pid that no
// process has or untouched for a day.
TEST(SdkFile, OnlyProvablyDeadWritersTempFilesAreRemoved) {
  TempDir dir;
  const std::string boot = BootId8();
  ASSERT_EQ(boot.size(), 8u);
  const std::string other_boot = boot == "00000000" ? "11111111" : "00000000";
  const std::string dead = std::to_string(DeadPid()), alive = std::to_string(getpid());
  std::string header(16, '\0');
  const uint32_t version = sdkrt::kEventFileVersion, event_bytes = sizeof(sdkrt::Event);
  memcpy(header.data() + 8, &version, 4);
  memcpy(header.data() + 12, &event_bytes, 4);
  std::string whole = header;
  memcpy(whole.data(), sdkrt::kEventFileMagic, 8);
  const time_t now = time(nullptr);
  struct Case {
    std::string name, content;
    time_t age_s;
    bool removed;
  };
  const std::vector<Case> cases = {
      {"a.aiprof.tmp." + boot + "-" + dead + ".AAAAAA", header + "events", 0, true},
      {"b.aiprof.tmp." + boot + "-" + dead + ".BBBBBB", "", 0, true},  // killed before its first MiB
      {"c.aiprof.tmp." + boot + "-" + alive + ".CCCCCC", header, 0, false},
      {"d.aiprof.tmp." + boot + "-" + alive + ".DDDDDD", header, 2 * 86400, true},
      {"e.aiprof.tmp." + boot + "-" + dead + ".EEEEEE", whole, 0, false},   // whole: the rename was cut short
      {"f.aiprof.tmp." + boot + "-" + dead + ".FFFFFF", header, 0, false},  // locked below
      {"g.aiprof.tmp." + other_boot + "-" + dead + ".GGGGGG", header, 2 * 86400, true},
      {"h.aiprof.tmp." + other_boot + "-" + dead + ".HHHHHH", header, 3600, false},
      {"i.aiprof.tmp." + boot + "-" + dead + ".IIIIII", "not an event file", 0, false},
      {"j.aiprof.tmp.XXXXXX", header, 2 * 86400, true},  // earlier SDKs' naming (no owner): by age
      {"k.txt.tmp.123456", "", 2 * 86400, false},        // the same naming, but nothing of the SDK in it
      {"m.aiprof.tmp.MMMMMM", header, 3600, false},      // earlier SDKs' naming, recent
      {"l.aiprof.tmp." + boot + "-" + dead + ".LLLLLL.bak", header, 0, false},
      {"\x1b[31mn.aiprof.tmp." + boot + "-" + dead + ".NNNNNN", header, 0, true},  // said escaped
  };
  for (const Case& c : cases) {
    const std::string path = dir.path() + "/" + c.name;
    std::ofstream(path, std::ios::binary) << c.content;
    struct timeval times[2] = {{now - c.age_s, 0}, {now - c.age_s, 0}};
    ASSERT_EQ(utimes(path.c_str(), times), 0);
  }
  const int locked = open((dir.path() + "/" + cases[5].name).c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(locked, 0);
  ASSERT_EQ(flock(locked, LOCK_EX), 0);
  // Of a distributed job only rank 0 looks (each of thousands of ranks
  // would read the whole folder at exit).
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"steps", "1"}, {{"AIPROF_OUTPUT", dir.path() + "/"}, {"RANK", "3"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(dir.Files().size(), cases.size() + 1);
  ::testing::internal::CaptureStderr();  // the program's stderr too (descriptor 2)
  r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"steps", "1"}, {{"AIPROF_OUTPUT", dir.path() + "/"}, {"RANK", "0"}});
  const std::string said = ::testing::internal::GetCapturedStderr();
  close(locked);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> files = dir.Files();
  for (const Case& c : cases) {
    EXPECT_EQ(std::find(files.begin(), files.end(), c.name) == files.end(), c.removed) << c.name;
  }
  const long removed = std::count_if(cases.begin(), cases.end(), [](const Case& c) { return c.removed; });
  EXPECT_EQ(files.size(), 2 + cases.size() - removed);
  // Each removal said once, with why, the name escaped.
  size_t lines = 0;
  for (size_t at = said.find("aiprof: removed "); at != std::string::npos; at = said.find("aiprof: removed ", at + 1))
    ++lines;
  EXPECT_EQ(lines, static_cast<size_t>(removed)) << said;
  EXPECT_NE(said.find("/\\x1b[31mn.aiprof.tmp." + boot + "-" + dead +
                      ".NNNNNN, a temporary event file left by a "
                      "write that did not finish: its writer, pid " +
                      dead + " on this boot, is gone"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("/j.aiprof.tmp.XXXXXX, a temporary event file left by a write that did not finish: untouched "
                      "for 48 hours"),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find('\x1b'), std::string::npos) << "a terminal control reached stderr";
}

// The disk fills while the process records (a file size limit stands in
// for it): the spill file's chunks then go on in memory, and the write at
// exit fails too. The spill file is what is left, and its reader must say
// that it is incomplete. Before, it read as complete: 14,324 of 200,000
// spans, with no sdk_spill_incomplete, as if the process had stopped
// recording when the disk filled.
TEST(SdkFile, DiskFilledWhileRecordingIsSaidSo) {
  TempDir dir;
  constexpr long kSpans = 200000;
  Result r =
      RunProgram(AIPROF_SDK_TEST_PROGRAM, {"disk_full", std::to_string(kSpans)}, {{"AIPROF_OUTPUT", dir.path() + "/"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto pid = Lines(r.out, "pid");
  ASSERT_EQ(pid.size(), 1u);
  const std::string part = "aiprof-" + pid[0][1] + ".aiprof.part";
  ASSERT_EQ(dir.Files(), (std::vector<std::string>{part}));  // the failed write left no file
  auto t = Load(dir.path() + "/" + part);
  ASSERT_NE(t, nullptr);
  const std::map<std::string, uint64_t> counts = CountsByName(*t);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_GT(counts.at("filling"), 10000u);  // what the file took before it filled
  EXPECT_LT(counts.at("filling"), static_cast<uint64_t>(kSpans));
  const auto& diags = t->diagnostics.entries();
  ASSERT_TRUE(diags.count("sdk_spill_incomplete"));
  EXPECT_EQ(diags.at("sdk_spill_incomplete").count, 1u);
  EXPECT_EQ(diags.at("sdk_stream_unterminated").count, 1u);
  size_t thread_tracks = 0;
  for (size_t i = 0; i < t->tracks.size(); ++i) thread_tracks += t->tracks.kind[i] == TrackKind::kThread;
  EXPECT_EQ(thread_tracks, 1u);
}

// Record mode's chunks (one per MiB recorded, in the spill file) are mapped
// side by side, so they add a mapping per 256 MiB window, not one each: a
// process may have only vm.max_map_count mappings (65,530 by default), and
// a long run (64 GB of events at one mapping per MiB) then failed every
// mmap of the process, its own allocations too. 3,000,000 spans (96 MB)
// added 94 mappings before.
TEST(SdkFile, LongRunsChunksDoNotAddAMappingEach) {
  TempDir dir;
  constexpr long kSpans = 3000000;
  Result r =
      RunProgram(AIPROF_SDK_TEST_PROGRAM, {"maps", std::to_string(kSpans)}, {{"AIPROF_OUTPUT", dir.path() + "/"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto maps = Lines(r.out, "maps");
  ASSERT_EQ(maps.size(), 1u);
  const int before = std::stoi(maps[0][1]), after = std::stoi(maps[0][2]);
  EXPECT_LE(after - before, 4) << before << " mappings after the first span, " << after << " after " << kSpans;
  std::vector<std::string> files = dir.Files();
  ASSERT_EQ(files.size(), 1u);
  auto t = Load(dir.path() + "/" + files[0]);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->slices.size(), static_cast<size_t>(kSpans));
}

// fork() does not wait for a flush in progress on another thread (a
// DataLoader starting its workers while the training thread flushes): the
// program holds its flushing thread inside its write (a SIGXFSZ handler that
// waits on a pipe) and forks. Before, ForkPrepare took the writer's lock,
// so fork() waited for the flush and the flush for the forking thread: the
// program's 20 s alarm ended it (SIGALRM). The file being written is
// opened close-on-exec, so a child that execs does not keep it open (it did
// with mkstemp).
TEST(SdkFile, ForkDoesNotWaitForAFlush) {
  TempDir dir;
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"fork_during_flush", dir.path() + "/held.aiprof"},
                        {{"AIPROF_OUTPUT", dir.path() + "/"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Lines(r.out, "forked").size(), 1u) << r.out;
  // The child, which exec'd ls, did not inherit the file being written.
  EXPECT_EQ(r.out.find(".tmp."), std::string::npos) << r.out;
  auto rc = Lines(r.out, "flush_to");
  ASSERT_EQ(rc.size(), 1u) << r.out;
  EXPECT_EQ(rc[0][1], "-1");  // EFBIG: the limit the writer was held at
  // The parent's file at exit (after the limit was lifted) holds its spans.
  std::vector<std::string> files = dir.Files();
  ASSERT_EQ(files.size(), 1u) << files.size() << " files";
  auto t = Load(dir.path() + "/" + files[0]);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(CountsByName(*t), (std::map<std::string, uint64_t>{{"before_fork", 20000}}));
}

// Ring mode: a flush copied every ring under the registry lock, so a thread
// that started (its first call registers it) or exited meanwhile waited for
// the whole copy (bench/sdk_registry_wait.py: up to 270 ms with 8 rings of
// 8 MiB). The program holds its flush inside the copy of a ring (in the
// malloc of that copy) while a thread starts and another exits; neither may
// wait for the flush. On the old code both waited, until the 5 s bounds of
// the program gave up ("registered 0", "exited 0").
TEST(SdkFile, ThreadsStartAndExitWhileAFlushCopiesTheRings) {
  TempDir dir;
  const std::string held = dir.path() + "/held.aiprof";
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"registry_during_flush", held},
                        {{"AIPROF_OUTPUT", dir.path() + "/"}, {"AIPROF_MODE", "ring"}, {"AIPROF_RING_MB", "0.5"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  if (r.out == "skipped\n") GTEST_SKIP() << "the program's malloc is not used under this sanitizer";
  EXPECT_EQ(Lines(r.out, "registered"), (std::vector<std::vector<std::string>>{{"registered", "1"}})) << r.out;
  EXPECT_EQ(Lines(r.out, "exited"), (std::vector<std::vector<std::string>>{{"exited", "1"}})) << r.out;
  EXPECT_EQ(Lines(r.out, "flush"), (std::vector<std::vector<std::string>>{{"flush", "0"}})) << r.out;
  // The held flush's file: the rings as they were when it began (the thread
  // that started meanwhile is not in it).
  auto t = Load(held);
  ASSERT_NE(t, nullptr);
  const std::map<std::string, uint64_t> counts = CountsByName(*t);
  EXPECT_EQ(counts.count("started_during_flush"), 0u);
  EXPECT_EQ(counts.at("exits_during_flush"), 1u);
  // A full ring of 32,768 events, 2 a span; the slot after the newest of a
  // live thread's events may be half written, so it is left out.
  EXPECT_GE(counts.at("fills_the_ring"), 32768u / 2 - 1);
  EXPECT_LE(counts.at("fills_the_ring"), 32768u / 2);
}

// Runs the CLI with `args`; its exit status, standard output and error.
struct CliResult {
  int exit_code = -1;
  std::string out, err;
};
CliResult RunCli(const std::string& args) {
  TempDir io;
  const std::string out = io.path() + "/out", err = io.path() + "/err";
  const int status = std::system((std::string(AIPROF_CLI) + " " + args + " > " + out + " 2> " + err).c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  for (auto [path, text] : {std::pair{out, &r.out}, std::pair{err, &r.err}}) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    *text = ss.str();
  }
  return r;
}

// Every line but the one naming the input.
std::string WithoutSource(const std::string& json) {
  std::istringstream in(json);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find("\"source\": ") == std::string::npos) out += line + "\n";
  }
  return out;
}

// A program that forked, its files named on the command line as a shell's
// `traces/aiprof-*` names them (the parent's event file, the child's spill
// file): one trace, the same as their folder's ("The following argument was
// not expected" before). A file that is not an SDK file among them is a bad
// command line naming it; files of two runs are an error naming them.
TEST(SdkFile, ForkedRunsFilesOnTheCommandLineLoadAsTheirFolder) {
  TempDir dir;
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"fork_exit", "10"}, {{"AIPROF_OUTPUT", dir.path() + "/"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<std::string> files = dir.Files();
  ASSERT_EQ(files.size(), 2u);
  std::string listed;
  for (const std::string& f : files) listed += " " + dir.path() + "/" + f;
  CliResult given = RunCli("summary --format json" + listed);
  ASSERT_EQ(given.exit_code, 0) << given.err;
  CliResult folder = RunCli("summary --format json " + dir.path());
  ASSERT_EQ(folder.exit_code, 0) << folder.err;
  EXPECT_NE(given.out.find("\"source\": \"" + listed.substr(1) + "\""), std::string::npos) << given.out.substr(0, 300);
  EXPECT_EQ(WithoutSource(given.out), WithoutSource(folder.out));
  EXPECT_NE(given.out.find("\"name\": \"child_worker\""), std::string::npos);
  EXPECT_NE(given.out.find("\"name\": \"parent_before\""), std::string::npos);
  // The commands that read one trace take them alike.
  TempDir other;
  for (const std::string& command : {std::string("analyze --format json"), std::string("diagnose --format json"),
                                     "export --format chrome-json -o " + other.path() + "/export.json"}) {
    CliResult c = RunCli(command + listed);
    EXPECT_EQ(c.exit_code, 0) << command << ": " << c.err;
  }

  const std::string json = other.path() + "/run.json";
  std::ofstream(json)
      << R"({"traceEvents": [{"ph": "X", "name": "op", "cat": "cpu_op", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]})";
  CliResult mixed = RunCli("summary" + listed + " " + json);
  EXPECT_EQ(mixed.exit_code, 2) << mixed.err;
  EXPECT_NE(mixed.err.find(json + ": not an SDK file"), std::string::npos) << mixed.err;

  // The same program run again into the same folder: another run.
  Result again = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"fork_exit", "10"}, {{"AIPROF_OUTPUT", dir.path() + "/"}});
  ASSERT_EQ(again.exit_code, 0) << again.out;
  std::string all;
  for (const std::string& f : dir.Files()) all += " " + dir.path() + "/" + f;
  CliResult two_runs = RunCli("summary" + all);
  EXPECT_EQ(two_runs.exit_code, 1) << two_runs.err;
  EXPECT_NE(two_runs.err.find("not one run's SDK files: "), std::string::npos) << two_runs.err;
}

// A training loop of the SDK alone (no cpu_op) that sleeps 4 ms of each
// 9 ms step in a span marked as data loading, its name holding "dataloader"
// (docs/sdk.md, "Data loading"): `aiprof diagnose` finds data_loading with
// the share the file holds (none found before: no cpu_op, no timeline). The
// same loop with the span named "data" is not data loading.
TEST(SdkFile, DataLoaderSpanGivesTheDataLoadingFinding) {
  TempDir dir;
  const std::string file = dir.path() + "/train.aiprof";
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"data", "12", "dataloader"}, {{"AIPROF_OUTPUT", file}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto trace = Load(file);
  ASSERT_NE(trace, nullptr);
  const std::vector<uint32_t> loader = SlicesNamed(*trace, "dataloader"), forward = SlicesNamed(*trace, "forward");
  ASSERT_EQ(loader.size(), 12u);
  ASSERT_EQ(forward.size(), 12u);
  ASSERT_EQ(trace->steps.size(), 12u);
  const SliceTable& s = trace->slices;
  // The loop's thread is busy in "forward" only: all its other time, each
  // stretch holding a "dataloader" span, is waiting for data.
  // data_loading_ratio: that time between the first and last forward, a
  // share of that span.
  const int64_t first = s.ts_ns[forward.front()], last = s.ts_ns[forward.back()] + s.dur_ns[forward.back()];
  int64_t busy = 0;
  for (uint32_t f : forward) busy += s.dur_ns[f];
  const double want_ratio = 1.0 - static_cast<double>(busy) / static_cast<double>(last - first);
  // The finding's share: that time per steady step (the steps from `w` on,
  // the leading ones being warm-up), of the mean steady step; the last
  // step's end after its forward waits for nothing.
  auto want_share = [&](size_t w) {
    int64_t waiting = 0, steps = 0;
    for (size_t i = w; i < 12; ++i) {
      steps += trace->steps.dur_ns[i];
      waiting += trace->steps.dur_ns[i] - s.dur_ns[forward[i]];
    }
    waiting -= trace->steps.ts_ns[11] + trace->steps.dur_ns[11] - last;
    return static_cast<double>(waiting) / static_cast<double>(steps);
  };
  auto mean_step_ms = [&](size_t w) {
    int64_t steps = 0;
    for (size_t i = w; i < 12; ++i) steps += trace->steps.dur_ns[i];
    return static_cast<double>(steps) / 1e6 / static_cast<double>(12 - w);
  };

  TempDir out;
  const std::string json = out.path() + "/diagnose.json";
  CliResult c = RunCli("diagnose --format json -o " + json + " " + file);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(json).get(doc), simdjson::SUCCESS);
  bool found = false;
  for (simdjson::dom::element f : doc["findings"].get_array()) {
    if (std::string_view(f["rule"]) != "data_loading") continue;
    found = true;
    // The steady steps: the warm-up left out leads; the basis is their mean.
    const double basis_ms = double(f["impact"]["basis_ms"]);
    size_t w = 0;
    while (w < 11 && std::abs(mean_step_ms(w) - basis_ms) > 1e-6) ++w;
    ASSERT_NEAR(mean_step_ms(w), basis_ms, 1e-6) << "the steady steps are no tail of the file's steps";
    EXPECT_NEAR(double(f["impact"]["share"]), want_share(w), 0.001) << w << " warm-up steps";
    for (simdjson::dom::element ind : f["indicators"].get_array()) {
      if (std::string_view(ind["metric"]) == "data_loading_ratio") {
        EXPECT_NEAR(double(ind["value"]), want_ratio, 0.001);
      }
    }
  }
  EXPECT_TRUE(found) << "no data_loading finding; want share " << want_share(0);
  EXPECT_GT(want_ratio, 0.05);  // past the rule's threshold: the loop sleeps 4 ms of each 9 ms step
  trace.reset();

  const std::string unmarked = dir.path() + "/unmarked.aiprof";
  r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"data", "12", "data"}, {{"AIPROF_OUTPUT", unmarked}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  c = RunCli("diagnose --format json -o " + json + " " + unmarked);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  ASSERT_EQ(parser.load(json).get(doc), simdjson::SUCCESS);
  for (simdjson::dom::element f : doc["findings"].get_array()) EXPECT_NE(std::string_view(f["rule"]), "data_loading");
}

// AIPROF_SPILL=0 keeps the buffers in anonymous memory: a child leaving by
// _exit() leaves nothing, as before.
TEST(SdkFile, SpillOffLeavesNothingOnExit) {
  TempDir dir;
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"fork_exit", "10"},
                        {{"AIPROF_OUTPUT", dir.path() + "/"}, {"AIPROF_SPILL", "0"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto parent = Lines(r.out, "parent");
  ASSERT_EQ(parent.size(), 1u);
  EXPECT_EQ(dir.Files(), (std::vector<std::string>{"aiprof-" + parent[0][1] + ".aiprof"}));
}

// LLM serving through the real runtime: each request's TTFT, TPOT, queue
// time and ITL lie within the program's own clock readings around its calls
// (bounds: the earliest and latest the SDK could have read its clock).
TEST(SdkFile, RequestTokensGiveTtftTpotAndItl) {
  TempDir dir;
  const std::string file = dir.path() + "/tokens.aiprof";
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"tokens", "4"}, {{"AIPROF_OUTPUT", file}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto reqs = Lines(r.out, "req");
  ASSERT_EQ(reqs.size(), 4u);
  auto t = Load(file);
  ASSERT_NE(t, nullptr);
  const RequestTokenStats s = ComputeRequestTokens(*t);
  ASSERT_EQ(s.requests.size(), 4u);
  EXPECT_EQ(s.output_tokens, 4u * 5);
  EXPECT_EQ(s.prompt_tokens, 4u * 16);
  EXPECT_EQ(s.itl_ns.count, 4u * 2);
  const int64_t slack = 2000;  // ns: the SDK's clock against clock_gettime (TSC conversion)
  for (size_t i = 0; i < 4; ++i) {
    std::vector<int64_t> v;
    for (size_t k = 1; k < reqs[i].size(); ++k) v.push_back(std::stoll(reqs[i][k]));
    const int64_t b0 = v[0], b1 = v[1], p0 = v[2], p1 = v[3], t10 = v[4], t11 = v[5], t30 = v[8], t31 = v[9];
    const RequestTokenRow& row = s.requests[i];
    EXPECT_EQ(row.output_tokens, 5u);
    EXPECT_EQ(row.prompt_tokens, 16u);
    EXPECT_GE(row.ttft_ns, t10 - b1 - slack) << i;
    EXPECT_LE(row.ttft_ns, t11 - b0 + slack) << i;
    EXPECT_GE(row.queue_ns, p0 - b1 - slack) << i;
    EXPECT_LE(row.queue_ns, p1 - b0 + slack) << i;
    // TPOT: (t3 - t1) / (5 - 1).
    EXPECT_GE(row.tpot_ns, static_cast<double>(t30 - t11 - slack) / 4) << i;
    EXPECT_LE(row.tpot_ns, static_cast<double>(t31 - t10 + slack) / 4) << i;
  }
}

// The rest of the C API, from C: counters, marks, interning, thread names,
// flush_to, and the default output name; both link forms.
void CheckApi(const char* program) {
  TempDir dir;
  std::string explicit_path = dir.path() + "/explicit.aiprof";
  Result r = RunProgram(program, {"api", explicit_path},
                        {{"AIPROF_OUTPUT", dir.path() + "/run-%p.aiprof"}, {"RANK", "3"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* line : {"enabled 1", "abi 1", "intern_same 1", "request_id_nonzero 1", "flush_to 0",
                           "clock_ns_positive 1"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  auto output = Lines(r.out, "output");
  ASSERT_EQ(output.size(), 1u);
  EXPECT_EQ(output[0][1].rfind(dir.path() + "/run-", 0), 0u) << output[0][1];
  EXPECT_EQ(dir.Files().size(), 2u);
  for (const std::string& path : {explicit_path, output[0][1]}) {
    auto trace = Load(path);
    ASSERT_NE(trace, nullptr);
    auto counts = CountsByName(*trace);
    EXPECT_EQ(counts["dyn_7"], 1u);
    EXPECT_EQ(counts["request"], 1u);
    EXPECT_EQ(counts.count("open_at_exit"), 0u);
    EXPECT_EQ(Meta(*trace, "sdk.open_spans"), "1");
    ASSERT_EQ(trace->counters.size(), 10u);
    for (size_t i = 0; i < 10; ++i) {
      EXPECT_EQ(trace->counters.value[i], static_cast<double>(i) * 1.5);
      uint32_t track = trace->counters.track[i];
      EXPECT_EQ(trace->tracks.kind[track], TrackKind::kCounter);
      EXPECT_EQ(trace->Str(trace->tracks.name[track]), "queue_depth");
      if (i > 0) {
        EXPECT_GE(trace->counters.ts_ns[i], trace->counters.ts_ns[i - 1]);
      }
    }
    ASSERT_EQ(trace->instants.size(), 1u);
    EXPECT_EQ(trace->Str(trace->instants.name[0]), "checkpoint");
    bool named = false;
    for (size_t i = 0; i < trace->tracks.size(); ++i) named |= trace->Str(trace->tracks.name[i]) == "api-main";
    EXPECT_TRUE(named);
    EXPECT_EQ(Meta(*trace, "source_format"), "aiprof_sdk");
    EXPECT_EQ(Meta(*trace, "sdk.bytes_per_event"), "16");
    EXPECT_EQ(Meta(*trace, "rank"), "3");  // from RANK, as torch.distributed sets it
    for (size_t i = 0; i < trace->tracks.size(); ++i) EXPECT_EQ(trace->tracks.rank[i], 3);
  }
}

// AIPROF_FLUSH_SIGNAL=USR2: the signal makes the runtime write its file
// while the program runs (what `aiprof monitor` sends); exit writes it again.
TEST(SdkFile, FlushSignalWritesTheFile) {
  TempDir dir;
  std::string file = dir.path() + "/signal.aiprof";
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"signal"},
                        {{"AIPROF_OUTPUT", file}, {"AIPROF_FLUSH_SIGNAL", "USR2"}, {"AIPROF_MODE", "ring"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto signalled = Load(file + ".signal");
  auto final_file = Load(file);
  ASSERT_NE(signalled, nullptr);
  ASSERT_NE(final_file, nullptr);
  EXPECT_EQ(CountsByName(*signalled), (std::map<std::string, uint64_t>{{"before", 5}}));
  EXPECT_EQ(CountsByName(*final_file), (std::map<std::string, uint64_t>{{"after", 3}, {"before", 5}}));
}

// Misuse is repaired or dropped, counted as diagnostics, never a broken file.
TEST(SdkFile, MisuseIsCountedNotFatal) {
  TempDir dir;
  std::string file = dir.path() + "/misuse.aiprof";
  Result r = RunProgram(AIPROF_SDK_TEST_PROGRAM, {"misuse"}, {{"AIPROF_OUTPUT", file}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto trace = Load(file);
  ASSERT_NE(trace, nullptr);
  const auto& d = trace->diagnostics.entries();
  ASSERT_TRUE(d.count("sdk_unmatched_end"));
  EXPECT_EQ(d.at("sdk_unmatched_end").count, 2u);
  ASSERT_TRUE(d.count("sdk_unclosed_span"));
  EXPECT_EQ(d.at("sdk_unclosed_span").count, 1u);
  ASSERT_TRUE(d.count("sdk_request_unmatched_end"));
  EXPECT_EQ(d.at("sdk_request_unmatched_end").count, 1u);
  ASSERT_TRUE(d.count("sdk_request_duplicate_end"));
  EXPECT_EQ(d.at("sdk_request_duplicate_end").count, 1u);
  EXPECT_EQ(Meta(*trace, "sdk.requests_in_flight"), "1");
  auto counts = CountsByName(*trace);
  EXPECT_EQ(counts["ProfilerStep#0"], 1u);
  EXPECT_EQ(counts["leaked"], 1u);  // ended with its step
  EXPECT_EQ(counts["request"], 1u);
  EXPECT_EQ(counts.count("in_flight"), 0u);
  EXPECT_EQ(counts[""], 1u);             // aiprof_span_begin(NULL) (docs/sdk.md)
  EXPECT_EQ(counts["bad\xff\xfe"], 1u);  // bytes kept as given
  std::vector<uint32_t> leaked = SlicesNamed(*trace, "leaked");
  ASSERT_EQ(trace->steps.size(), 1u);
  EXPECT_EQ(trace->slices.ts_ns[leaked[0]] + trace->slices.dur_ns[leaked[0]],
            trace->steps.ts_ns[0] + trace->steps.dur_ns[0]);
}

// The C++ header: scopes, AIPROF_FUNCTION's name, a step, a node, a counter,
// and a Request moved to another thread; with -DAIPROF_DISABLE, nothing.
TEST(SdkFile, CppApi) {
  TempDir dir;
  std::string file = dir.path() + "/cpp.aiprof";
  Result r = RunProgram(AIPROF_SDK_CPP_PROGRAM, {}, {{"AIPROF_OUTPUT", file}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto trace = Load(file);
  ASSERT_NE(trace, nullptr);
  EXPECT_EQ(CountsByName(*trace), (std::map<std::string, uint64_t>{{"Handle", 3},
                                                                   {"ProfilerStep#0", 1},
                                                                   {"cpp_request", 1},
                                                                   {"cpp_scope", 3},
                                                                   {"node:cpp_node", 1},
                                                                   {"serve", 1},
                                                                   {"submit", 1}}));
  for (uint32_t s : SlicesNamed(*trace, "cpp_scope")) EXPECT_EQ(trace->slices.depth[s], 3);  // step > node > Handle
  ASSERT_EQ(trace->counters.size(), 1u);
  EXPECT_EQ(trace->counters.value[0], 6.0);
  ASSERT_EQ(trace->flows.size(), 1u);
  EXPECT_EQ(trace->Str(trace->slices.name[trace->flows.from_slice[0]]), "submit");
  EXPECT_EQ(trace->Str(trace->slices.name[trace->flows.to_slice[0]]), "serve");
  // Request::Prefill / Token / Tokens (the last on the thread that ends it).
  const RequestTokenStats tokens = ComputeRequestTokens(*trace);
  ASSERT_EQ(tokens.requests.size(), 1u);
  EXPECT_EQ(tokens.requests[0].prompt_tokens, 8u);
  EXPECT_EQ(tokens.requests[0].output_tokens, 3u);

  TempDir off;
  Result d = RunProgram(AIPROF_SDK_CPP_PROGRAM_DISABLED, {}, {{"AIPROF_OUTPUT", off.path() + "/"}});
  ASSERT_EQ(d.exit_code, 0);
  EXPECT_TRUE(off.Files().empty());
}

TEST(SdkFile, CApiShared) { CheckApi(AIPROF_SDK_TEST_PROGRAM); }
TEST(SdkFile, CApiStaticCLinker) { CheckApi(AIPROF_SDK_TEST_PROGRAM_STATIC); }

}  // namespace
}  // namespace aiprof
