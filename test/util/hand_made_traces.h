// Hand-made traces shared by several tests, each with the figures worked out
// by hand beside it. Small edge cases a test alone uses stay in that test;
// a trace two tests read lives here, so the copies cannot drift.
#ifndef AIPROF_TEST_UTIL_HAND_MADE_TRACES_H_
#define AIPROF_TEST_UTIL_HAND_MADE_TRACES_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace aiprof::testing {

// One device stream (device 0, stream 7) running `names` in order, `repeats`
// times: 5 us kernels starting every 6 us (1 us gaps), for the fusion
// candidates' tests of which kernels end a run.
inline std::string KernelStreamTrace(std::initializer_list<const char*> names, int repeats) {
  std::string ev;
  int64_t ts = 0;
  for (int i = 0; i < repeats; ++i) {
    for (const char* name : names) {
      if (!ev.empty()) ev += ",";
      ev += std::string(R"({"ph": "X", "cat": "kernel", "name": ")") + name + R"(", "pid": 0, "tid": 7, "ts": )" +
            std::to_string(ts) + R"(, "dur": 5, "args": {"device": 0, "stream": 7}})";
      ts += 6;
    }
  }
  return "{\"traceEvents\": [" + ev + "]}";
}

// A device running behind its host. Three 10 us ProfilerStep spans back to
// back, each launching a 15 us kernel; the kernels queue on one stream and
// end at 20, 35 and 50 us. By hand: host spans 10 us; device periods (work
// end to work end) 15 and 15 us (a rank's first step has none); step wall
// times (a step's start to its own work's end) 20, 25 and 30 us. The device
// runs behind (every step's work ends after its span, and the mean period
// exceeds the mean host span by more than 5%), so the step time is the
// period: 15 us over 2 periods.
inline constexpr char kDeviceBehindTrace[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":10},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":0.5,"args":{"correlation":1}},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":10,"dur":10},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":11,"dur":0.5,"args":{"correlation":2}},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":20,"dur":10},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":21,"dur":0.5,"args":{"correlation":3}},
  {"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":5,"dur":15,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":20,"dur":15,"args":{"device":0,"stream":7,"correlation":2}},
  {"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":35,"dur":15,"args":{"device":0,"stream":7,"correlation":3}}
]})json";

// The same with collectives: three 10 us ProfilerStep spans back to back;
// each launches a 10 us compute kernel and a 5 us all-reduce, queued on one
// stream: step 1's work runs 5-15 and 15-20, step 2's 20-30 and 30-35, step
// 3's 35-45 and 45-50 us. By hand: work ends 20, 35, 50; periods 15, 15 us >
// host spans 10 us, so the step time is the period. Step 2's period [20, 35)
// and step 3's [35, 50) each hold 5 us of all-reduce, none under compute;
// step 1 (no period) holds none in its host span [0, 10). Over the host
// spans instead: step 2 [10, 20) holds step 1's all-reduce (5 us), step 3
// [20, 30) none.
inline constexpr char kDeviceBehindWithCollectivesTrace[] = R"json({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":0.5,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2,"dur":0.5,"args":{"correlation":2}},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":10,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":11,"dur":0.5,"args":{"correlation":3}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":0.5,"args":{"correlation":4}},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":20,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":21,"dur":0.5,"args":{"correlation":5}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":22,"dur":0.5,"args":{"correlation":6}},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":5,"dur":10,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float","pid":0,"tid":7,"ts":15,"dur":5,"args":{"device":0,"stream":7,"correlation":2}},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":20,"dur":10,"args":{"device":0,"stream":7,"correlation":3}},
    {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float","pid":0,"tid":7,"ts":30,"dur":5,"args":{"device":0,"stream":7,"correlation":4}},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":35,"dur":10,"args":{"device":0,"stream":7,"correlation":5}},
    {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float","pid":0,"tid":7,"ts":45,"dur":5,"args":{"device":0,"stream":7,"correlation":6}}
  ]})json";

// SDK event files (the version-1 layout of src/sdk/event_stream.h, clock in
// nanoseconds from base 0, pid 77, no rank). The event types are restated
// here, as the file format fixes them, not read from the SDK's header.
enum SdkFileEventType : uint8_t {
  kSdkFileRequestBegin = 7,
  kSdkFileRequestEnd = 8,
  kSdkFileExtName = 11,
  kSdkFileRequestPrefill = 14,
  kSdkFileRequestTokens = 15,
  kSdkFileExtCount = 16
};

struct SdkFileEvent {
  int64_t ts;
  uint8_t type;
  uint64_t payload;
};

// One file of `threads` (tids 100, 101, ...), each a list of events; string
// 0 is "generate".
inline std::string SdkEventFile(const std::vector<std::vector<SdkFileEvent>>& threads) {
  std::string out("AIPROFS\n", 8);
  auto put = [&out](auto v) { out.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  auto put_string = [&](const std::string& text) {
    put(uint64_t{text.size()});
    out.append(text);
  };
  put(uint32_t{1});
  put(uint32_t{16});
  put(int64_t{77});  // pid
  put(int32_t{-1});  // rank
  put(uint32_t{0});  // nanoseconds
  put(int64_t{0});   // base
  put(uint64_t{1} << 32);
  put(1.0);
  put(0.0);
  put_string("server");
  put_string("record");
  put(uint64_t{threads.size()});
  int64_t tid = 100;
  for (const auto& t : threads) {
    put(tid++);
    put(uint64_t{t.size()});
    put(uint64_t{0});
    put_string("t");
    put(uint64_t{t.size()});
    for (const SdkFileEvent& e : t) {
      put((static_cast<uint64_t>(e.ts) << 8) | e.type);
      put(e.payload);
    }
  }
  put(uint64_t{1});
  put_string("generate");
  out.append("AIPROFSEND", 10);
  return out;
}

// Three requests of the SDK's token calls, read by the summary's request
// tokens (src/analysis/summary/request_tokens_test.cc) and validate's ttft,
// tpot and itl samples (src/analysis/validation/trace_samples_test.cc).
// Request 1 (thread A): begins at 0, prefill of 512 tokens at 100, tokens at
// 1000, 1300, 1500 (two at once), 2100; ends at 2500. Request 2 (thread B):
// begins at 200, one token at 700, ends at 900. Request 3: three tokens, 1 at
// 3000 and 4 at 3400, from 2800 to 3500, begun on A and ended on B. A token
// event for id 9, which never began, is not counted.
inline std::string ThreeTokenRequestsFile() {
  const std::vector<SdkFileEvent> a = {
      {0, kSdkFileRequestBegin, 1},     {0, kSdkFileExtName, 0},          {100, kSdkFileRequestPrefill, 1},
      {100, kSdkFileExtCount, 512},     {1000, kSdkFileRequestTokens, 1}, {1000, kSdkFileExtCount, 1},
      {1300, kSdkFileRequestTokens, 1}, {1300, kSdkFileExtCount, 1},      {1500, kSdkFileRequestTokens, 1},
      {1500, kSdkFileExtCount, 2},      {2100, kSdkFileRequestTokens, 1}, {2100, kSdkFileExtCount, 1},
      {2500, kSdkFileRequestEnd, 1},    {2600, kSdkFileRequestTokens, 9}, {2600, kSdkFileExtCount, 1},
      {2800, kSdkFileRequestBegin, 3},  {2800, kSdkFileExtName, 0},       {3000, kSdkFileRequestTokens, 3},
      {3000, kSdkFileExtCount, 1},
  };
  const std::vector<SdkFileEvent> b = {
      {200, kSdkFileRequestBegin, 2}, {200, kSdkFileExtName, 0},     {700, kSdkFileRequestTokens, 2},
      {700, kSdkFileExtCount, 1},     {900, kSdkFileRequestEnd, 2},  {3400, kSdkFileRequestTokens, 3},
      {3400, kSdkFileExtCount, 4},    {3500, kSdkFileRequestEnd, 3},
  };
  return SdkEventFile({a, b});
}

}  // namespace aiprof::testing

#endif  // AIPROF_TEST_UTIL_HAND_MADE_TRACES_H_
