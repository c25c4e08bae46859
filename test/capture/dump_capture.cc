// Test helper: prints a .aiprof file's samples (with their stacks), slices,
// steps, counters and metadata as JSON lines, for the capture and monitor
// tests' Python checks (test/capture/capture_e2e.py, test/monitor/). The
// file is a native one or the SDK's event file (imported, as every command
// does).
#include <cstdio>
#include <string>

#include "src/importers/common/importer_registry.h"

namespace {

std::string Json(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dump_capture FILE.aiprof\n");
    return 2;
  }
  auto r = aiprof::ImportTraceFile(argv[1]);
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().message().c_str());
    return 1;
  }
  const aiprof::Trace& t = *r.value();
  for (const auto& [k, v] : t.metadata) std::printf("{\"meta\":%s,\"value\":%s}\n", Json(k).c_str(), Json(v).c_str());
  for (const auto& [k, e] : t.diagnostics.entries()) {
    std::printf("{\"diagnostic\":%s,\"count\":%llu,\"what\":%s}\n", Json(k).c_str(),
                static_cast<unsigned long long>(e.count), Json(e.description).c_str());
  }
  for (size_t i = 0; i < t.tracks.size(); ++i) {
    std::printf("{\"track\":%zu,\"pid\":%lld,\"tid\":%lld,\"layer\":%s,\"name\":%s,\"process\":%s,\"kind\":%d}\n",
                i, static_cast<long long>(t.tracks.pid[i]), static_cast<long long>(t.tracks.tid[i]),
                Json(aiprof::LayerName(t.tracks.layer[i])).c_str(), Json(t.Str(t.tracks.name[i])).c_str(),
                Json(t.Str(t.tracks.process_name[i])).c_str(), static_cast<int>(t.tracks.kind[i]));
  }
  for (size_t i = 0; i < t.slices.size(); ++i) {
    std::printf("{\"slice\":%s,\"ts\":%lld,\"dur\":%lld,\"track\":%u,\"depth\":%u,\"cat\":%s}\n",
                Json(t.Str(t.slices.name[i])).c_str(), static_cast<long long>(t.slices.ts_ns[i]),
                static_cast<long long>(t.slices.dur_ns[i]), t.slices.track[i].raw(), t.slices.depth[i],
                Json(t.Str(t.slices.category[i])).c_str());
  }
  for (size_t i = 0; i < t.steps.size(); ++i) {
    std::printf("{\"step\":%lld,\"ts\":%lld,\"dur\":%lld}\n", static_cast<long long>(t.steps.number[i]),
                static_cast<long long>(t.steps.ts_ns[i]), static_cast<long long>(t.steps.dur_ns[i]));
  }
  for (size_t i = 0; i < t.counters.size(); ++i) {
    std::printf("{\"counter\":%s,\"ts\":%lld,\"value\":%.17g}\n", Json(t.Str(t.tracks.name[t.counters.track[i]])).c_str(),
                static_cast<long long>(t.counters.ts_ns[i]), t.counters.value[i]);
  }
  for (size_t i = 0; i < t.samples.size(); ++i) {
    std::string stack = "[";
    for (uint32_t c = t.samples.callsite[i]; c != aiprof::kNoCallsite; c = t.callsites.parent[c]) {
      if (stack.size() > 1) stack += ",";
      stack += "[" + Json(t.Str(t.callsites.frame[c])) + "," + Json(t.Str(t.callsites.module[c])) + "]";
    }
    stack += "]";
    std::printf("{\"sample\":%lld,\"track\":%u,\"weight\":%lld,\"stack\":%s}\n", static_cast<long long>(t.samples.ts_ns[i]),
                t.samples.track[i].raw(), static_cast<long long>(t.samples.weight_ns[i]), stack.c_str());
  }
  return 0;
}
