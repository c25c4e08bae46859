// validate's samples of the SDK's request token figures (--unit ttft, tpot,
// itl: SamplesFromTrace over src/analysis/summary/request_tokens.h): a
// hand-made SDK event file (the layout of src/sdk/event_stream.h, clock in
// nanoseconds from base 0) with requests at known times, read through the
// importer, against the figures worked out by hand below (the summary's own
// figures of the same requests: summary/request_tokens_test.cc).
#include "src/analysis/validation/trace_samples.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "test/util/temp_file.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

// Event types of src/sdk/event_stream.h (the file format, fixed by its version).
enum : uint8_t {
  kTokenFileRequestBegin = 7,
  kTokenFileRequestEnd = 8,
  kTokenFileExtName = 11,
  kTokenFileRequestPrefill = 14,
  kTokenFileRequestTokens = 15,
  kTokenFileExtCount = 16
};

struct TokenFileEvent {
  int64_t ts;
  uint8_t type;
  uint64_t payload;
};

template <typename T>
void PutTokenFileValue(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}
void PutTokenFileString(std::string* out, const std::string& s) {
  PutTokenFileValue<uint64_t>(out, s.size());
  out->append(s);
}

// One version-1 SDK event file: threads of events, string 0 = "generate".
std::string TokenEventFile(const std::vector<std::vector<TokenFileEvent>>& threads) {
  std::string out("AIPROFS\n", 8);
  PutTokenFileValue<uint32_t>(&out, 1);
  PutTokenFileValue<uint32_t>(&out, 16);
  PutTokenFileValue<int64_t>(&out, 77);  // pid
  PutTokenFileValue<int32_t>(&out, -1);  // rank
  PutTokenFileValue<uint32_t>(&out, 0);  // nanoseconds
  PutTokenFileValue<int64_t>(&out, 0);   // base
  PutTokenFileValue<uint64_t>(&out, uint64_t{1} << 32);
  PutTokenFileValue<double>(&out, 1.0);
  PutTokenFileValue<double>(&out, 0.0);
  PutTokenFileString(&out, "server");
  PutTokenFileString(&out, "record");
  PutTokenFileValue<uint64_t>(&out, threads.size());
  int64_t tid = 100;
  for (const auto& t : threads) {
    PutTokenFileValue<int64_t>(&out, tid++);
    PutTokenFileValue<uint64_t>(&out, t.size());
    PutTokenFileValue<uint64_t>(&out, 0);
    PutTokenFileString(&out, "t");
    PutTokenFileValue<uint64_t>(&out, t.size());
    for (const TokenFileEvent& e : t) {
      PutTokenFileValue<uint64_t>(&out, (static_cast<uint64_t>(e.ts) << 8) | e.type);
      PutTokenFileValue<uint64_t>(&out, e.payload);
    }
  }
  PutTokenFileValue<uint64_t>(&out, 1);
  PutTokenFileString(&out, "generate");
  out.append("AIPROFSEND", 10);
  return out;
}

TEST(TraceSamplesTest, TokenUnitsMatchTheirDefinitions) {
  // Request 1 (thread A): begins at 0, prefill of 512 tokens at 100, tokens
  // at 1000, 1300, 1500 (two at once), 2100; ends at 2500. Request 2 (thread
  // B): begins at 200, one token at 700, ends at 900. Request 3: three
  // tokens, 1 at 3000 and 4 at 3400, from 2800 to 3500, begun on A and
  // ended on B. A token event for id 9, which never began, is not counted.
  // By hand: TTFT (first token - begin) 1000, 500, 200; TPOT ((last token -
  // first token) / tokens after the first) 275 (1100 / 4), 100 (400 / 4),
  // none for request 2 (one token); ITL (time since the request's previous
  // token event / its tokens) 300, 100 (200 / 2), 600, and 100 (400 / 4).
  const std::vector<TokenFileEvent> a = {
      {0, kTokenFileRequestBegin, 1},     {0, kTokenFileExtName, 0},          {100, kTokenFileRequestPrefill, 1},
      {100, kTokenFileExtCount, 512},     {1000, kTokenFileRequestTokens, 1}, {1000, kTokenFileExtCount, 1},
      {1300, kTokenFileRequestTokens, 1}, {1300, kTokenFileExtCount, 1},      {1500, kTokenFileRequestTokens, 1},
      {1500, kTokenFileExtCount, 2},      {2100, kTokenFileRequestTokens, 1}, {2100, kTokenFileExtCount, 1},
      {2500, kTokenFileRequestEnd, 1},    {2600, kTokenFileRequestTokens, 9}, {2600, kTokenFileExtCount, 1},
      {2800, kTokenFileRequestBegin, 3},  {2800, kTokenFileExtName, 0},       {3000, kTokenFileRequestTokens, 3},
      {3000, kTokenFileExtCount, 1},
  };
  const std::vector<TokenFileEvent> b = {
      {200, kTokenFileRequestBegin, 2}, {200, kTokenFileExtName, 0},     {700, kTokenFileRequestTokens, 2},
      {700, kTokenFileExtCount, 1},     {900, kTokenFileRequestEnd, 2},  {3400, kTokenFileRequestTokens, 3},
      {3400, kTokenFileExtCount, 4},    {3500, kTokenFileRequestEnd, 3},
  };
  testing::TempDir dir;
  auto trace = testing::ImportPath(dir.Write("tokens.aiprof", TokenEventFile({a, b})));
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const std::vector<double> ttft = {200, 500, 1000}, tpot = {100, 275}, itl = {100, 100, 300, 600};  // sorted
  for (const char* unit : {"ttft", "tpot", "itl"}) {
    TraceSampleOptions o;
    o.unit = unit;
    auto s = SamplesFromTrace(**trace, "tokens", o);
    ASSERT_TRUE(s.ok()) << s.status().message();
    const std::vector<double>& want = std::string(unit) == "ttft" ? ttft : std::string(unit) == "tpot" ? tpot : itl;
    std::vector<double> got = s->latency_ns;
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << unit;
  }
}

}  // namespace
}  // namespace aiprof
