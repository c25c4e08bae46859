// Meta MTIA's DMA requests carry their size as "size"; the importer adds the
// "bytes" arg the memcpy analysis reads (it showed "bytes unknown" for every
// MTIA copy: input trial, 'in').
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "src/model/trace.h"
#include "test/util/temp_file.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
// Named, not anonymous: the unity build puts this file beside the others.
namespace mtia_dma_test {

// The slice's arg `key` as an unsigned number (-1: absent or not a non-negative integer).
int64_t UintArg(const Trace& t, uint32_t slice, const char* key) {
  const std::optional<StringId> id = t.strings.Find(key);
  const Arg* a = id ? t.FindSliceArg(slice, *id) : nullptr;
  if (a == nullptr) return -1;
  if (a->type == ArgType::kUint) return static_cast<int64_t>(a->u);
  if (a->type == ArgType::kInt && a->i >= 0) return a->i;
  return -1;
}

std::string StrArg(const Trace& t, uint32_t slice, const char* key) {
  const std::optional<StringId> id = t.strings.Find(key);
  const Arg* a = id ? t.FindSliceArg(slice, *id) : nullptr;
  return a != nullptr && a->type == ArgType::kString ? std::string(t.Str(StringId{a->str})) : "";
}

// HTA's MTIA inference trace (../shared/fixtures/kineto). The figures were
// computed independently from the raw file by a short Python script
// (json.load, the X events of cat mtia_ccp_events named dma_request, their
// args "size" summed by args "direction"; /work/notes/trial_in.md):
//   DEVICE_TO_HOST 450 requests 460,800 bytes; HOST_TO_DEVICE 427 requests 788,439,608 bytes.
TEST(MtiaDmaTest, RealTraceRequestsCarryTheirBytes) {
  auto t = testing::ImportFixture(
      "kineto/HolisticTraceAnalysis__tests__data__mtia_inference_trace__mtia_inference_rank_0.json.gz");
  ASSERT_TRUE(t);
  std::map<std::string, std::pair<int64_t, int64_t>> by_direction;  // requests, bytes
  for (uint32_t i = 0; i < t->slices.size(); ++i) {
    if (t->Str(t->slices.name[i]) != "dma_request") continue;
    EXPECT_EQ(t->slices.kind[i], EventKind::kMemcpy);
    const int64_t bytes = UintArg(*t, i, "bytes");
    ASSERT_GE(bytes, 0) << "slice " << i;
    EXPECT_EQ(bytes, UintArg(*t, i, "size"));
    auto& d = by_direction[StrArg(*t, i, "direction")];
    ++d.first;
    d.second += bytes;
  }
  EXPECT_EQ(by_direction.size(), 2u);
  EXPECT_EQ(by_direction["DEVICE_TO_HOST"], std::make_pair(int64_t{450}, int64_t{460800}));
  EXPECT_EQ(by_direction["HOST_TO_DEVICE"], std::make_pair(int64_t{427}, int64_t{788439608}));
  EXPECT_EQ(t->diagnostics.Count("mtia_dma_size_unknown"), 0u);
}

// Hand-made: a request without a usable size is counted (its bytes unknown,
// no "bytes" made up), one that says "bytes" itself keeps it alone, and a
// "size" on any other event is left as it is.
TEST(MtiaDmaTest, RequestsWithoutAUsableSizeAreCounted) {
  testing::TempDir dir;
  const std::string path = dir.Write("mtia.json", R"({"traceEvents": [
  {"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": 17, "tid": 1, "ts": 1, "dur": 1, "args": {"size": 4096}},
  {"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": 17, "tid": 1, "ts": 3, "dur": 1, "args": {"size": -5}},
  {"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": 17, "tid": 1, "ts": 5, "dur": 1, "args": {"size": "8 KB"}},
  {"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": 17, "tid": 1, "ts": 7, "dur": 1},
  {"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": 17, "tid": 1, "ts": 9, "dur": 1, "args": {"size": 10, "bytes": 12}},
  {"ph": "X", "cat": "mtia_runtime", "name": "dma_request", "pid": 865, "tid": 2, "ts": 1, "dur": 1, "args": {"size": 64}}
]})");
  auto t = testing::MustImport(path);
  ASSERT_TRUE(t);
  std::map<int64_t, std::pair<int64_t, int64_t>> by_ts_us;  // ts -> (bytes, bytes args)
  for (uint32_t i = 0; i < t->slices.size(); ++i) {
    int64_t count = 0;
    const std::optional<StringId> key = t->strings.Find("bytes");
    for (uint64_t a = t->slices.arg_begin[i]; key && a < t->slices.arg_begin[i] + t->slices.arg_count[i]; ++a) {
      count += t->args[a].key == *key;
    }
    by_ts_us[t->slices.ts_ns[i] / 1000 * 10 + (t->Str(t->slices.category[i]) == "mtia_runtime")] = {
        UintArg(*t, i, "bytes"), count};
  }
  EXPECT_EQ(by_ts_us[10], std::make_pair(int64_t{4096}, int64_t{1}));
  EXPECT_EQ(by_ts_us[30], std::make_pair(int64_t{-1}, int64_t{0}));
  EXPECT_EQ(by_ts_us[50], std::make_pair(int64_t{-1}, int64_t{0}));
  EXPECT_EQ(by_ts_us[70], std::make_pair(int64_t{-1}, int64_t{0}));
  EXPECT_EQ(by_ts_us[90], std::make_pair(int64_t{12}, int64_t{1}));
  EXPECT_EQ(by_ts_us[11], std::make_pair(int64_t{-1}, int64_t{0}));  // not a device DMA request
  EXPECT_EQ(t->diagnostics.Count("mtia_dma_size_unknown"), 3u);
}

}  // namespace mtia_dma_test
}  // namespace aiprof
