#include "src/analysis/host_functions/host_functions.h"

#include <algorithm>
#include <map>
#include <utility>

namespace aiprof {

std::vector<HostFunction> TopHostFunctions(const Trace& t, size_t limit) {
  std::map<std::pair<uint32_t, uint32_t>, HostFunction> by_frame;  // (frame, module) string ids
  std::vector<std::pair<uint32_t, uint32_t>> seen;
  uint64_t stacks = 0;
  const CallsiteTable& cs = t.callsites;
  for (size_t i = 0; i < t.samples.size(); ++i) {
    uint32_t c = t.samples.callsite[i];
    if (c == kNoCallsite || c >= cs.size()) continue;
    ++stacks;
    seen.clear();
    bool leaf = true;
    for (size_t guard = 0; c != kNoCallsite && c < cs.size() && guard < 4096; c = cs.parent[c], ++guard) {
      const std::pair<uint32_t, uint32_t> key{cs.frame[c].raw, cs.module[c].raw};
      HostFunction& f = by_frame[key];
      if (f.name.empty()) {
        f.name = std::string(t.Str(cs.frame[c]));
        f.module = std::string(t.Str(cs.module[c]));
      }
      if (leaf) ++f.self_samples;
      leaf = false;
      if (std::find(seen.begin(), seen.end(), key) == seen.end()) {
        seen.push_back(key);
        ++f.total_samples;
      }
    }
  }
  std::vector<HostFunction> out;
  for (auto& [key, f] : by_frame) {
    f.self_share = stacks ? static_cast<double>(f.self_samples) / static_cast<double>(stacks) : 0;
    f.total_share = stacks ? static_cast<double>(f.total_samples) / static_cast<double>(stacks) : 0;
    out.push_back(std::move(f));
  }
  // Self time first: the function the samples land in is the one to name;
  // total breaks ties (and ranks callers below their callees).
  std::sort(out.begin(), out.end(), [](const HostFunction& a, const HostFunction& b) {
    if (a.self_samples != b.self_samples) return a.self_samples > b.self_samples;
    if (a.total_samples != b.total_samples) return a.total_samples > b.total_samples;
    return a.name < b.name;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

uint64_t SamplesWithStack(const Trace& t) {
  uint64_t n = 0;
  for (size_t i = 0; i < t.samples.size(); ++i) n += t.samples.callsite[i] != kNoCallsite ? 1 : 0;
  return n;
}

}  // namespace aiprof
