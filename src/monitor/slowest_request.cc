#include "src/monitor/slowest_request.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string_view>

#include "src/capture/host_trace.h"

namespace aiprof {

// Where the time of request slice `best` went (see SlowestRequest).
namespace {

// A native frame named by its own symbol: not "lib!nearest+0x1f" (a place
// between symbols), "lib+0x1f" or "0x7f…" (no symbol), "[unknown]".
bool HasRealSymbol(std::string_view name) {
  return !name.empty() && name[0] != '[' && !name.starts_with("0x") && name.find("+0x") == std::string_view::npos;
}

// The index in `chain` (root first) of the function that took the time: the
// innermost Python frame, else the innermost with a real symbol, else the last.
template <typename Chain>
size_t NamedFunction(const Chain& chain) {
  if (chain.empty()) return 0;
  for (size_t i = chain.size(); i-- > 0;) {
    if (chain[i].second->python) return i;
  }
  for (size_t i = chain.size(); i-- > 0;) {
    if (chain[i].second->symbol) return i;
  }
  return chain.size() - 1;
}

SlowestRequest DescribeRequest(const Trace& t, uint32_t best) {
  SlowestRequest r;
  r.found = true;
  r.name = std::string(t.Str(t.slices.name[best]));
  r.ts_ns = t.slices.ts_ns[best];
  r.dur_ns = t.slices.dur_ns[best];
  std::vector<uint32_t> threads;
  for (size_t f = 0; f < t.flows.size(); ++f) {
    const uint32_t a = t.flows.from_slice[f], b = t.flows.to_slice[f];
    if (a != best && b != best) continue;
    for (uint32_t end : {a, b}) {
      if (end < t.slices.size() && t.tracks.kind[t.slices.track[end]] == TrackKind::kThread) {
        threads.push_back(t.slices.track[end]);
      }
    }
  }
  if (!threads.empty())
    r.thread =
        std::string(t.Str(t.tracks.name[threads[0]])) + " (tid " + std::to_string(t.tracks.tid[threads[0]]) + ")";
  // A function on the stack: native frames by name; Python frames
  // ("function (file.py:line)", the capture's splice) by function and file,
  // whatever line it was at, shown with its line seen most often.
  struct OnStack {
    uint64_t samples = 0;
    bool python = false, symbol = false;  // a Python frame; a native frame with a real symbol
    std::map<uint32_t, uint64_t> depths;  // depth -> samples (ordered by the most frequent: a stack cut
                                          // short puts its Python frames at the root)
    std::map<uint32_t, uint64_t> names;   // frame string id -> samples (a Python function's lines)
  };
  auto most = [](const std::map<uint32_t, uint64_t>& m) {
    return std::max_element(m.begin(), m.end(), [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
  };
  // Without a flow every thread counts but aiprof's own (named "aiprof-…":
  // the SDK's live thread, the Python SDK's frame sampler).
  std::vector<uint32_t> own;
  if (threads.empty()) {
    for (uint32_t k = 0; k < t.tracks.size(); ++k) {
      if (t.tracks.kind[k] == TrackKind::kThread && t.Str(t.tracks.name[k]).starts_with("aiprof-")) own.push_back(k);
    }
  }
  std::map<std::string_view, OnStack> on_stack;
  const CallsiteTable& cs = t.callsites;
  std::vector<std::string_view> seen;
  for (size_t i = 0; i < t.samples.size(); ++i) {
    const int64_t ts = t.samples.ts_ns[i];
    if (ts < r.ts_ns || ts > r.ts_ns + r.dur_ns) continue;
    if (!threads.empty() && std::find(threads.begin(), threads.end(), t.samples.track[i]) == threads.end()) continue;
    if (std::find(own.begin(), own.end(), t.samples.track[i]) != own.end()) continue;
    uint32_t c = t.samples.callsite[i];
    if (c == kNoCallsite || c >= cs.size()) continue;
    ++r.samples;
    seen.clear();
    bool python = false;
    for (size_t guard = 0; c != kNoCallsite && c < cs.size() && guard < 4096; c = cs.parent[c], ++guard) {
      std::string_view key = t.Str(cs.frame[c]);
      python |= cs.kind[c] == FrameKind::kPython;
      if (cs.kind[c] == FrameKind::kPython && key.ends_with(')')) {
        const size_t colon = key.rfind(':');
        if (colon != std::string_view::npos) key = key.substr(0, colon);
      }
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(key);
      OnStack& o = on_stack[key];
      ++o.samples;
      o.python = cs.kind[c] == FrameKind::kPython;
      o.symbol = o.python || HasRealSymbol(key);
      ++o.names[cs.frame[c].raw];
      ++o.depths[cs.depth[c]];
    }
    r.python_samples += python ? 1 : 0;
  }
  std::vector<std::pair<uint32_t, const OnStack*>> chain;  // (depth, function) on at least half the stacks
  for (const auto& [key, o] : on_stack) {
    if (2 * o.samples >= r.samples) chain.emplace_back(most(o.depths), &o);
  }
  std::stable_sort(chain.begin(), chain.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [d, o] : chain) {
    r.path.emplace_back(std::string(t.Str(StringId{most(o->names)})),
                        r.samples ? static_cast<double>(o->samples) / static_cast<double>(r.samples) : 0);
  }
  r.named = NamedFunction(chain);
  return r;
}

}  // namespace

// Requests tried, slowest first, for one with host samples: the sampler
// starts a little after the deep trace's window opens, so the slowest
// request may hold none.
inline constexpr size_t kSlowestRequestCandidates = 64;

SlowestRequest FindSlowestRequest(const Trace& t, int64_t from_ns, int64_t to_ns) {
  std::vector<uint32_t> requests;
  for (uint32_t i = 0; i < t.slices.size(); ++i) {
    const uint32_t track = t.slices.track[i];
    if (t.tracks.kind[track] != TrackKind::kSpans || !t.Str(t.tracks.name[track]).starts_with("requests")) continue;
    if (t.slices.ts_ns[i] < from_ns || t.slices.ts_ns[i] > to_ns) continue;
    requests.push_back(i);
  }
  if (requests.empty()) return SlowestRequest{};
  const size_t n = std::min(requests.size(), kSlowestRequestCandidates);
  std::partial_sort(requests.begin(), requests.begin() + static_cast<std::ptrdiff_t>(n), requests.end(),
                    [&](uint32_t a, uint32_t b) {
                      return t.slices.dur_ns[a] != t.slices.dur_ns[b] ? t.slices.dur_ns[a] > t.slices.dur_ns[b] : a < b;
                    });
  std::optional<SlowestRequest> with_samples;
  for (size_t k = 0; k < n; ++k) {
    SlowestRequest r = DescribeRequest(t, requests[k]);
    if (r.python_samples > 0) return r;
    if (r.samples > 0 && !with_samples) with_samples = std::move(r);
  }
  return with_samples ? *with_samples : DescribeRequest(t, requests[0]);
}

std::string SlowestFunction(const SlowestRequest& r) {
  return r.path.empty() ? "" : r.path[std::min(r.named, r.path.size() - 1)].first;
}

std::string DescribeSlowest(const SlowestRequest& r) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%.4g ms", static_cast<double>(r.dur_ns) / 1e6);
  std::string out = "\"" + r.name + "\", " + buf + (r.thread.empty() ? "" : " on " + r.thread);
  if (r.path.empty()) return out + "; no host samples on its thread while it ran";
  const size_t named = std::min(r.named, r.path.size() - 1);
  std::snprintf(buf, sizeof(buf), " (on the stack in %.0f%% of its %llu samples)", r.path[named].second * 100,
                static_cast<unsigned long long>(r.samples));
  out += ": " + r.path[named].first + buf;
  out += "; path: ";
  for (size_t i = 0; i <= named; ++i) out += (i ? " > " : "") + r.path[i].first;
  if (named + 1 < r.path.size()) {
    out += "; native tail below it: ";
    for (size_t i = named + 1; i < r.path.size(); ++i) {
      std::snprintf(buf, sizeof(buf), " (%.0f%%)", r.path[i].second * 100);
      out += (i > named + 1 ? " > " : "") + r.path[i].first + buf;
    }
  }
  return out;
}

const HostFunction* HottestServiceFunction(const std::vector<HostFunction>& functions) {
  for (const HostFunction& f : functions) {
    if (f.module != kAiprofOverheadModule) return &f;
  }
  return nullptr;
}

}  // namespace aiprof
