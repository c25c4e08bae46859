// LLM serving figures from the SDK's token calls: a hand-made SDK event file
// (the layout of src/sdk/event_stream.h, clock in nanoseconds from base 0)
// with requests at known times, read through the importer, against the
// definitions computed here independently (request_tokens.h).
#include "src/analysis/summary/request_tokens.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/summary/summary.h"
#include "test/util/hand_made_traces.h"
#include "test/util/temp_file.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

struct Hand {
  int64_t begin, end, prefill = -1;
  std::vector<std::pair<int64_t, uint64_t>> tokens;  // (time, count)
};

double Quantile(std::vector<double> v, double q) {  // numpy's linear interpolation
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos)), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - std::floor(pos));
}

TEST(RequestTokens, HandMadeRequestsMatchTheirDefinitions) {
  // The three requests of ThreeTokenRequestsFile (test/util/hand_made_traces.h),
  // their times restated for the definitions below.
  const std::vector<Hand> hand = {
      {0, 2500, 100, {{1000, 1}, {1300, 1}, {1500, 2}, {2100, 1}}},
      {200, 900, -1, {{700, 1}}},
      {2800, 3500, -1, {{3000, 1}, {3400, 4}}},
  };
  testing::TempDir dir;
  auto trace = testing::ImportPath(dir.Write("tokens.aiprof", testing::ThreeTokenRequestsFile()));
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const Trace& t = **trace;
  EXPECT_EQ(t.metadata.at("sdk.token_events_unmatched"), "1");

  // The definitions, computed here from the hand-made times.
  std::vector<double> ttft, tpot, itl, rate;
  uint64_t output = 0;
  for (const Hand& h : hand) {
    uint64_t n = 0;
    for (auto [ts, c] : h.tokens) n += c;
    output += n;
    ttft.push_back(static_cast<double>(h.tokens.front().first - h.begin));
    if (n > h.tokens.front().second) {
      tpot.push_back(static_cast<double>(h.tokens.back().first - h.tokens.front().first) /
                     static_cast<double>(n - h.tokens.front().second));
    }
    for (size_t i = 1; i < h.tokens.size(); ++i) {
      itl.push_back(static_cast<double>(h.tokens[i].first - h.tokens[i - 1].first) / static_cast<double>(h.tokens[i].second));
    }
    rate.push_back(static_cast<double>(n) * 1e9 / static_cast<double>(h.end - h.begin));
  }
  // By hand, for the reader: TTFT 1000, 500, 200; TPOT 275 (1100 / 4), 100
  // (400 / 4); ITL 300, 100, 600, 100.
  EXPECT_EQ(ttft, (std::vector<double>{1000, 500, 200}));
  EXPECT_EQ(tpot, (std::vector<double>{275, 100}));
  EXPECT_EQ(itl, (std::vector<double>{300, 100, 600, 100}));

  const RequestTokenStats r = ComputeRequestTokens(t);
  ASSERT_EQ(r.requests.size(), 3u);
  EXPECT_EQ(r.output_tokens, output);
  EXPECT_EQ(r.prompt_tokens, 512u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.requests[i].id, i + 1);
    EXPECT_EQ(static_cast<double>(r.requests[i].ttft_ns), ttft[i]);
    EXPECT_DOUBLE_EQ(r.requests[i].tokens_per_s, rate[i]);
  }
  EXPECT_EQ(r.requests[0].queue_ns, 100);
  EXPECT_EQ(r.requests[1].queue_ns, -1);
  EXPECT_EQ(r.requests[0].tpot_ns, 275);
  EXPECT_EQ(r.requests[1].tpot_ns, -1);
  EXPECT_EQ(r.requests[2].tpot_ns, 100);
  for (double q : {0.5, 0.9, 0.99}) {
    const double got[] = {q == 0.5 ? r.ttft_ns.p50 : q == 0.9 ? r.ttft_ns.p90 : r.ttft_ns.p99,
                          q == 0.5 ? r.tpot_ns.p50 : q == 0.9 ? r.tpot_ns.p90 : r.tpot_ns.p99,
                          q == 0.5 ? r.itl_ns.p50 : q == 0.9 ? r.itl_ns.p90 : r.itl_ns.p99,
                          q == 0.5 ? r.tokens_per_s.p50 : q == 0.9 ? r.tokens_per_s.p90 : r.tokens_per_s.p99};
    EXPECT_DOUBLE_EQ(got[0], Quantile(ttft, q)) << q;
    EXPECT_DOUBLE_EQ(got[1], Quantile(tpot, q)) << q;
    EXPECT_DOUBLE_EQ(got[2], Quantile(itl, q)) << q;
    EXPECT_DOUBLE_EQ(got[3], Quantile(rate, q)) << q;
  }
  EXPECT_EQ(r.itl_ns.count, 4u);
  EXPECT_DOUBLE_EQ(r.ttft_ns.mean, (1000.0 + 500 + 200) / 3);

  // The summary carries them; the metrics rules read (validate's samples of
  // them: src/analysis/validation/trace_samples_test.cc).
  EXPECT_EQ(ComputeSummary(t).requests.requests.size(), 3u);
  MetricSet m;
  PublishRequestTokens(r, &m);
  ASSERT_NE(m.Get("request_ttft_p99_ns"), nullptr);
  EXPECT_DOUBLE_EQ(m.Get("request_ttft_p99_ns")->value, Quantile(ttft, 0.99));
  EXPECT_DOUBLE_EQ(m.Get("request_tpot_p50_ns")->value, Quantile(tpot, 0.5));
  EXPECT_DOUBLE_EQ(m.Get("request_itl_p99_ns")->value, Quantile(itl, 0.99));
  EXPECT_EQ(m.Get("requests_with_tokens")->value, 3);
}

TEST(RequestTokens, RequestsWithoutTokensMeanUnavailableMetrics) {
  // A request without token calls: the metrics are unavailable, with the reason.
  std::vector<testing::SdkFileEvent> a = {
      {0, testing::kSdkFileRequestBegin, 1}, {0, testing::kSdkFileExtName, 0}, {500, testing::kSdkFileRequestEnd, 1}};
  testing::TempDir dir;
  auto trace = testing::ImportPath(dir.Write("no-tokens.aiprof", testing::SdkEventFile({a})));
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const RequestTokenStats r = ComputeRequestTokens(**trace);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.request_slices, 1u);
  MetricSet m;
  PublishRequestTokens(r, &m);
  EXPECT_EQ(m.Get("request_ttft_p50_ns"), nullptr);
  ASSERT_TRUE(m.UnavailableReason("request_ttft_p50_ns").has_value());
  EXPECT_NE(m.UnavailableReason("request_ttft_p50_ns")->find("1 SDK requests recorded no tokens"), std::string::npos);
  // No SDK requests at all (not a serving trace): nothing published.
  Trace empty;
  MetricSet none;
  PublishRequestTokens(ComputeRequestTokens(empty), &none);
  EXPECT_FALSE(none.UnavailableReason("request_ttft_p50_ns").has_value());
}

}  // namespace
}  // namespace aiprof
