#include "src/importers/sdk/sdk_processes.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <system_error>

#include "src/importers/common/byte_source.h"
#include "src/importers/sdk/sdk_event_importer.h"

namespace aiprof {
namespace {

std::string Meta(const Trace& t, const std::string& key) {
  auto it = t.metadata.find(key);
  return it == t.metadata.end() ? std::string() : it->second;
}

// The last recorded time of a process: its slices' ends, instants and
// counter samples.
int64_t LastEventNs(const Trace& t) {
  int64_t last = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < t.slices.size(); ++i) last = std::max(last, t.slices.ts_ns[i] + t.slices.dur_ns[i]);
  for (size_t i = 0; i < t.instants.size(); ++i) last = std::max(last, t.instants.ts_ns[i]);
  for (size_t i = 0; i < t.counters.size(); ++i) last = std::max(last, t.counters.ts_ns[i]);
  return last;
}

}  // namespace

bool IsSdkProcessTrace(const Trace& t) { return Meta(t, "source_format") == "aiprof_sdk"; }

bool SupersededBySpillFile(const std::string& path, const std::vector<std::string>& paths) {
  const std::string suffix = ".aiprof";
  if (path.size() < suffix.size() || path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return false;
  }
  return std::find(paths.begin(), paths.end(), path + ".part") != paths.end();
}

Status CheckSdkFile(const std::string& path) {
  constexpr const char* kOnlySdkFiles =
      ": several inputs on one command line are one run's SDK files (aiprof-<pid>.aiprof, or the .aiprof.part a "
      "dead process left), merged by process; give any other trace on its own, and several ranks' traces as "
      "their folder";
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(st)) return ErrStatus(path + ": a folder" + kOnlySdkFiles);
  // A pipe or device is never opened here: it can be read only once.
  if (!ec && !std::filesystem::is_regular_file(st)) return ErrStatus(path + ": not a regular file" + kOnlySdkFiles);
  StatusOr<std::string> prefix = ReadPrefix(path, 64);
  if (!prefix.ok()) return ErrStatus(prefix.status().message() + kOnlySdkFiles);
  if (!DetectSdkEventFile(*prefix)) return ErrStatus(path + ": not an SDK file" + kOnlySdkFiles);
  return OkStatus();
}

Status CheckSdkFilesOfOneRun(const std::vector<std::string>& paths, const std::vector<const Trace*>& parts) {
  std::map<std::string, size_t> by_pid;
  // Per clock base (a process and the children it forked): the earliest
  // base and the last event, and a file that has it.
  struct Family {
    int64_t start = 0, end = 0;
    size_t file = 0;
  };
  std::map<std::string, Family> families;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Trace& t = *parts[i];
    const std::string pid = Meta(t, "pid");
    auto [it, added] = by_pid.emplace(pid, i);
    if (!added && !pid.empty()) {
      return ErrStatus("not one run's SDK files: " + paths[it->second] + " and " + paths[i] + " are both process " +
                       pid + " (two runs, or a copy); load each run's folder on its own");
    }
    const std::string base = Meta(t, "sdk.clock_base_ns");
    if (base.empty()) continue;  // an older SDK's file: nothing to compare
    const int64_t start = std::strtoll(base.c_str(), nullptr, 10);
    const int64_t end = std::max(start, LastEventNs(t));
    auto [f, first] = families.emplace(base, Family{start, end, i});
    if (!first) f->second.end = std::max(f->second.end, end);
  }
  // Families one after the other with no time in common: a run that ended
  // before the other started.
  std::vector<Family> order;
  for (const auto& [base, f] : families) order.push_back(f);
  std::sort(order.begin(), order.end(), [](const Family& a, const Family& b) { return a.start < b.start; });
  for (size_t i = 1; i < order.size(); ++i) {
    int64_t reach = order[0].end;
    size_t last = 0;
    for (size_t j = 0; j < i; ++j) {
      if (order[j].end >= reach) reach = order[j].end, last = j;
    }
    if (order[i].start > reach) {
      return ErrStatus("not one run's SDK files: " + paths[order[i].file] + " started " +
                       std::to_string((order[i].start - reach) / 1000000) + " ms after the last event of " +
                       paths[order[last].file] +
                       " and was not forked from it (another clock base): another run; load each run's folder on its "
                       "own");
    }
  }
  return OkStatus();
}

}  // namespace aiprof
