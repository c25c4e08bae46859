#include "src/analysis/summary/host_samples.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <unordered_map>

namespace aiprof {
namespace {

uint64_t PairKey(StringId a, StringId b) { return (static_cast<uint64_t>(a.raw) << 32) | b.raw; }

// The function index of each call site, and whether a Python frame lies on
// its path to the root (a parent precedes its children: kEarlierRow).
void IndexCallsites(const Trace& trace, HostSampleStats* out, std::vector<uint32_t>* fn_of,
                    std::vector<uint8_t>* python) {
  const CallsiteTable& c = trace.callsites;
  std::unordered_map<uint64_t, uint32_t> index;
  fn_of->resize(c.size());
  python->resize(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    auto [it, added] = index.emplace(PairKey(c.frame[i], c.module[i]), static_cast<uint32_t>(out->functions.size()));
    if (added) out->functions.push_back({.frame = c.frame[i], .module = c.module[i], .kind = c.kind[i]});
    (*fn_of)[i] = it->second;
    const uint32_t up = c.parent[i];
    (*python)[i] = c.kind[i] == FrameKind::kPython || (up != kNoCallsite && up < i && (*python)[up]);
  }
}

std::optional<uint64_t> TruncatedFromCapture(const Trace& trace) {
  auto it = trace.metadata.find("capture.host_stacks_truncated");
  if (it == trace.metadata.end()) return std::nullopt;
  uint64_t v = 0;
  const std::string& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

HostSampleStats ComputeHostSamples(const Trace& trace) {
  HostSampleStats out;
  const StackSampleTable& s = trace.samples;
  if (s.size() == 0) return out;
  out.truncated = TruncatedFromCapture(trace);
  std::vector<uint32_t> fn_of;
  std::vector<uint8_t> python;
  IndexCallsites(trace, &out, &fn_of, &python);
  const size_t n_callsites = fn_of.size();
  // Samples per leaf call site; per thread; per (thread, leaf function).
  std::vector<uint64_t> leaf_count(n_callsites, 0);
  std::vector<int64_t> leaf_ns(n_callsites, 0);
  std::unordered_map<uint32_t, size_t> thread_of;
  std::unordered_map<uint64_t, uint64_t> thread_fn;
  for (size_t i = 0; i < s.size(); ++i) {
    const int64_t w = s.weight_ns[i];
    ++out.samples;
    out.weight_ns += w;
    auto [tit, added] = thread_of.emplace(s.track[i], out.threads.size());
    if (added) out.threads.push_back({.track = s.track[i]});
    SampledThread& th = out.threads[tit->second];
    ++th.samples;
    th.weight_ns += w;
    const uint32_t leaf = s.callsite[i];
    if (leaf == kNoCallsite || leaf >= n_callsites) continue;
    ++out.with_stack;
    ++leaf_count[leaf];
    leaf_ns[leaf] += w;
    if (python[leaf]) {
      ++out.with_python;
      ++th.with_python;
    }
    ++thread_fn[(static_cast<uint64_t>(tit->second) << 32) | fn_of[leaf]];
  }
  // Self: the leaf's function. Total: each function on the leaf's path once.
  const CallsiteTable& c = trace.callsites;
  std::vector<uint32_t> seen_at(out.functions.size(), UINT32_MAX);
  for (uint32_t leaf = 0; leaf < n_callsites; ++leaf) {
    if (leaf_count[leaf] == 0) continue;
    SampledFunction& self = out.functions[fn_of[leaf]];
    self.self_samples += leaf_count[leaf];
    self.self_ns += leaf_ns[leaf];
    for (uint32_t x = leaf; x != kNoCallsite && x < n_callsites; x = c.parent[x]) {
      const uint32_t f = fn_of[x];
      if (seen_at[f] != leaf) {
        seen_at[f] = leaf;
        out.functions[f].total_samples += leaf_count[leaf];
        out.functions[f].total_ns += leaf_ns[leaf];
      }
      if (c.parent[x] != kNoCallsite && c.parent[x] >= x) break;  // not a tree: stop (the reader checks this)
    }
  }
  // Rank the functions, then renumber the threads' top functions.
  std::vector<uint32_t> order(out.functions.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const SampledFunction& x = out.functions[a];
    const SampledFunction& y = out.functions[b];
    if (x.self_samples != y.self_samples) return x.self_samples > y.self_samples;
    if (x.total_samples != y.total_samples) return x.total_samples > y.total_samples;
    const std::string_view nx = trace.Str(x.frame), ny = trace.Str(y.frame);
    if (nx != ny) return nx < ny;
    return trace.Str(x.module) < trace.Str(y.module);
  });
  std::vector<uint32_t> rank_of(order.size());
  std::vector<SampledFunction> ranked;
  ranked.reserve(order.size());
  for (uint32_t r = 0; r < order.size(); ++r) {
    rank_of[order[r]] = r;
    if (out.functions[order[r]].total_samples > 0) ranked.push_back(out.functions[order[r]]);
  }
  for (const auto& [key, count] : thread_fn) {
    SampledThread& th = out.threads[key >> 32];
    const int64_t f = rank_of[static_cast<uint32_t>(key)];
    if (count > th.top_function_samples || (count == th.top_function_samples && f < th.top_function)) {
      th.top_function = f;
      th.top_function_samples = count;
    }
  }
  out.functions = std::move(ranked);  // functions never sampled were ranked last: indices stay valid
  std::sort(out.threads.begin(), out.threads.end(), [](const SampledThread& a, const SampledThread& b) {
    if (a.samples != b.samples) return a.samples > b.samples;
    return a.track < b.track;
  });
  return out;
}

std::vector<size_t> FunctionsByTotal(const HostSampleStats& stats) {
  std::vector<size_t> out(stats.functions.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = i;
  std::sort(out.begin(), out.end(), [&](size_t a, size_t b) {
    const SampledFunction& x = stats.functions[a];
    const SampledFunction& y = stats.functions[b];
    if (x.total_samples != y.total_samples) return x.total_samples > y.total_samples;
    if (x.self_samples != y.self_samples) return x.self_samples > y.self_samples;
    return a < b;
  });
  return out;
}

}  // namespace aiprof
