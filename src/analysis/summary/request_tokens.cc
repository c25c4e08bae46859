#include "src/analysis/summary/request_tokens.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>

#include "src/analysis/metrics/metric_set.h"

namespace aiprof {
namespace {

std::optional<double> ArgNumber(const Arg* a) {
  if (!a) return std::nullopt;
  if (a->type == ArgType::kInt) return static_cast<double>(a->i);
  if (a->type == ArgType::kUint) return static_cast<double>(a->u);
  if (a->type == ArgType::kDouble) return a->d;
  return std::nullopt;
}

// Linear interpolation between closest ranks of sorted `v` (numpy's default).
double TokenQuantile(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

Distribution Describe(std::vector<double> v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  d.count = v.size();
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / static_cast<double>(v.size());
  d.p50 = TokenQuantile(v, 0.5);
  d.p90 = TokenQuantile(v, 0.9);
  d.p99 = TokenQuantile(v, 0.99);
  d.max = v.back();
  return d;
}

// The ids of the importer's arg keys, by one read-only pass over the pool
// (StringPool::Find would build the pool's hash index on a trace loaded
// from a native file, for every summary, and is not safe to call from
// several threads before that).
struct Keys {
  std::optional<StringId> ttft, id, prompt, output, queue, tpot, rate, token, n;
};

Keys FindKeys(const Trace& trace) {
  Keys k;
  const std::pair<std::string_view, std::optional<StringId>*> wanted[] = {
      {"ttft_ns", &k.ttft},     {"id", &k.id},       {"prompt_tokens", &k.prompt}, {"output_tokens", &k.output},
      {"queue_ns", &k.queue},   {"tpot_ns", &k.tpot}, {"tokens_per_s", &k.rate},    {"token", &k.token},
      {"n", &k.n}};
  for (uint32_t i = 0; i < trace.strings.size(); ++i) {
    const std::string_view s = trace.strings.Get(StringId{i});
    if (s.size() < 1 || s.size() > 13) continue;
    for (const auto& [text, out] : wanted) {
      if (!out->has_value() && s == text) *out = StringId{i};
    }
  }
  return k;
}

}  // namespace

RequestTokenStats ComputeRequestTokens(const Trace& trace) {
  RequestTokenStats out;
  const Keys keys = FindKeys(trace);
  // Requests of the SDK: slices on its "requests", "requests 2", ... lanes.
  {
    std::vector<bool> lane(trace.tracks.size(), false);
    bool any = false;
    for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
      const std::string_view name = trace.Str(trace.tracks.name[t]);
      lane[t] = name == "requests" || (name.size() > 9 && name.substr(0, 9) == "requests ");
      any = any || lane[t];
    }
    for (uint32_t i = 0; any && i < trace.slices.size(); ++i) out.request_slices += lane[trace.slices.track[i]];
  }
  const auto ttft_key = keys.ttft;
  if (!ttft_key) return out;
  const auto id_key = keys.id, prompt_key = keys.prompt, output_key = keys.output, queue_key = keys.queue;
  const auto tpot_key = keys.tpot, rate_key = keys.rate;
  std::vector<double> ttft, tpot, rate, queue, e2e;
  // (track, id) of each request with tokens: its token instants' lane and id.
  std::unordered_map<uint64_t, uint32_t> by_id;
  const SliceTable& s = trace.slices;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.arg_count[i] == 0) continue;
    auto t = ArgNumber(trace.FindSliceArg(i, *ttft_key));
    if (!t) continue;
    RequestTokenRow row;
    row.slice = i;
    row.id = static_cast<uint64_t>(ArgNumber(id_key ? trace.FindSliceArg(i, *id_key) : nullptr).value_or(0));
    row.ttft_ns = static_cast<int64_t>(*t);
    row.output_tokens =
        static_cast<uint64_t>(ArgNumber(output_key ? trace.FindSliceArg(i, *output_key) : nullptr).value_or(0));
    row.prompt_tokens =
        static_cast<uint64_t>(ArgNumber(prompt_key ? trace.FindSliceArg(i, *prompt_key) : nullptr).value_or(0));
    row.queue_ns =
        static_cast<int64_t>(ArgNumber(queue_key ? trace.FindSliceArg(i, *queue_key) : nullptr).value_or(-1));
    row.tpot_ns = ArgNumber(tpot_key ? trace.FindSliceArg(i, *tpot_key) : nullptr).value_or(-1);
    row.tokens_per_s = ArgNumber(rate_key ? trace.FindSliceArg(i, *rate_key) : nullptr).value_or(0);
    ttft.push_back(static_cast<double>(row.ttft_ns));
    if (row.tpot_ns >= 0) tpot.push_back(row.tpot_ns);
    rate.push_back(row.tokens_per_s);
    if (row.queue_ns >= 0) queue.push_back(static_cast<double>(row.queue_ns));
    e2e.push_back(static_cast<double>(s.dur_ns[i]));
    out.prompt_tokens += row.prompt_tokens;
    out.output_tokens += row.output_tokens;
    by_id[(static_cast<uint64_t>(s.track[i]) << 40) ^ row.id] = static_cast<uint32_t>(out.requests.size());
    out.requests.push_back(row);
  }
  std::sort(out.requests.begin(), out.requests.end(), [&](const RequestTokenRow& a, const RequestTokenRow& b) {
    return s.ts_ns[a.slice] != s.ts_ns[b.slice] ? s.ts_ns[a.slice] < s.ts_ns[b.slice] : a.id < b.id;
  });
  // ITL: consecutive token events of one request (same lane, same id).
  const auto token = keys.token, n_key = keys.n;
  std::vector<double> itl;
  if (token && id_key) {
    struct Tok {
      uint32_t track;
      uint64_t id;
      int64_t ts;
      double n;
    };
    std::vector<Tok> toks;
    const InstantTable& in = trace.instants;
    for (uint32_t i = 0; i < in.size(); ++i) {
      if (in.category[i] != *token || in.name[i] != *token) continue;
      std::optional<double> id, n;
      for (uint64_t a = in.arg_begin[i]; a < in.arg_begin[i] + in.arg_count[i]; ++a) {
        if (trace.args[a].key == *id_key) id = ArgNumber(&trace.args[a]);
        if (n_key && trace.args[a].key == *n_key) n = ArgNumber(&trace.args[a]);
      }
      if (!id) continue;
      toks.push_back(Tok{in.track[i], static_cast<uint64_t>(*id), in.ts_ns[i], n.value_or(1)});
    }
    std::sort(toks.begin(), toks.end(), [](const Tok& a, const Tok& b) {
      if (a.track != b.track) return a.track < b.track;
      return a.id != b.id ? a.id < b.id : a.ts < b.ts;
    });
    for (size_t i = 1; i < toks.size(); ++i) {
      if (toks[i].track != toks[i - 1].track || toks[i].id != toks[i - 1].id || toks[i].n <= 0) continue;
      itl.push_back(static_cast<double>(toks[i].ts - toks[i - 1].ts) / toks[i].n);
    }
  }
  out.ttft_ns = Describe(std::move(ttft));
  out.tpot_ns = Describe(std::move(tpot));
  out.itl_ns = Describe(std::move(itl));
  out.tokens_per_s = Describe(std::move(rate));
  out.queue_ns = Describe(std::move(queue));
  out.e2e_ns = Describe(std::move(e2e));
  return out;
}

void PublishRequestTokens(const RequestTokenStats& r, MetricSet* m) {
  constexpr const char* kSource = "request_tokens";
  const char* names[] = {"request_ttft_p50_ns", "request_ttft_p99_ns", "request_tpot_p50_ns", "request_tpot_p99_ns",
                         "request_itl_p99_ns", "request_tokens_per_s_p50", "requests_with_tokens"};
  if (r.empty()) {
    if (r.request_slices == 0) return;  // no SDK requests: not a serving trace
    for (const char* n : names) {
      m->SetUnavailable(n, "the trace's " + std::to_string(r.request_slices) +
                               " SDK requests recorded no tokens (aiprof_request_token / Request.token())");
    }
    return;
  }
  m->Set("requests_with_tokens", static_cast<double>(r.requests.size()), kSource);
  m->Set("request_ttft_p50_ns", r.ttft_ns.p50, kSource);
  m->Set("request_ttft_p99_ns", r.ttft_ns.p99, kSource);
  m->Set("request_tokens_per_s_p50", r.tokens_per_s.p50, kSource);
  const char* single = "every request produced its tokens in one event: no time per output token";
  if (r.tpot_ns.count > 0) {
    m->Set("request_tpot_p50_ns", r.tpot_ns.p50, kSource);
    m->Set("request_tpot_p99_ns", r.tpot_ns.p99, kSource);
  } else {
    m->SetUnavailable("request_tpot_p50_ns", single);
    m->SetUnavailable("request_tpot_p99_ns", single);
  }
  if (r.itl_ns.count > 0) {
    m->Set("request_itl_p99_ns", r.itl_ns.p99, kSource);
  } else {
    m->SetUnavailable("request_itl_p99_ns", single);
  }
}

}  // namespace aiprof
