// LLM serving figures per request, from the SDK's token calls
// (aiprof_request_prefill / _token / _tokens; docs/sdk.md, "LLM serving").
//
// The importer puts them on each request slice as args (id, prompt_tokens,
// queue_ns, output_tokens, ttft_ns, tokens_per_s, tpot_ns) and each token
// event as an instant "token" (category "token", args id and n) on the
// request's lane. Definitions, for a request begun at b, ended at e, with
// token events (t_i, n_i) in time order, N = Σ n_i:
//   TTFT = t_1 − b; TPOT = (t_k − t_1) / (N − n_1) when N > n_1;
//   ITL (one sample per token event after the first) = (t_i − t_{i−1}) / n_i;
//   tokens/s = N / (e − b); queue = prefill start − b.
// Percentiles interpolate between closest ranks (numpy's default), as the
// summary's op percentiles.
#ifndef AIPROF_SRC_ANALYSIS_SUMMARY_REQUEST_TOKENS_H_
#define AIPROF_SRC_ANALYSIS_SUMMARY_REQUEST_TOKENS_H_

#include <cstdint>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

struct Distribution {
  uint64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

struct RequestTokenRow {
  uint32_t slice = 0;  // the request's slice
  uint64_t id = 0;
  uint64_t prompt_tokens = 0, output_tokens = 0;
  int64_t queue_ns = -1;  // -1: no prefill recorded
  int64_t ttft_ns = 0;
  double tpot_ns = -1;  // -1: a single token event
  double tokens_per_s = 0;
};

struct RequestTokenStats {
  std::vector<RequestTokenRow> requests;  // requests with output tokens, by start
  Distribution ttft_ns, tpot_ns, itl_ns, tokens_per_s, queue_ns, e2e_ns;
  uint64_t prompt_tokens = 0, output_tokens = 0;
  uint64_t request_slices = 0;  // slices on the SDK's "requests" lanes, with or without tokens
  bool empty() const { return requests.empty(); }
};

// Linear in slices and instants (plus sorting the token instants).
RequestTokenStats ComputeRequestTokens(const Trace& trace);

// request_ttft_p50_ns, request_ttft_p99_ns, request_tpot_p50_ns,
// request_tpot_p99_ns, request_itl_p99_ns, request_tokens_per_s_p50,
// requests_with_tokens; unavailable (with the reason) when the trace has
// SDK requests but none recorded tokens; nothing at all for a trace without
// SDK requests (not a serving trace: the figures do not apply).
void PublishRequestTokens(const RequestTokenStats& stats, MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_SUMMARY_REQUEST_TOKENS_H_
