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

#include "test/util/hand_made_traces.h"
#include "test/util/temp_file.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

TEST(TraceSamplesTest, TokenUnitsMatchTheirDefinitions) {
  // The three requests of ThreeTokenRequestsFile (test/util/hand_made_traces.h).
  // By hand: TTFT (first token - begin) 1000, 500, 200; TPOT ((last token -
  // first token) / tokens after the first) 275 (1100 / 4), 100 (400 / 4),
  // none for request 2 (one token); ITL (time since the request's previous
  // token event / its tokens) 300, 100 (200 / 2), 600, and 100 (400 / 4).
  testing::TempDir dir;
  auto trace = testing::ImportPath(dir.Write("tokens.aiprof", testing::ThreeTokenRequestsFile()));
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
