#include "src/monitor/incident.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <tuple>

#include "src/base/libc/writer_temp.h"
#include "src/monitor/monitor_metrics.h"
#include "src/render/escape.h"

namespace aiprof {

std::string UtcText(int64_t unix_ms) {
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
  return buf;
}

namespace {

// The working folders this process writes, each with the descriptor that
// holds its lock (writer_temp.h) until it is published or removed.
std::mutex work_dirs_mu;
std::map<std::string, int>& WorkDirLocks() {
  static auto* locks = new std::map<std::string, int>();
  return *locks;
}

void ReleaseWorkDir(const std::string& work_dir) {
  std::lock_guard<std::mutex> lock(work_dirs_mu);
  auto it = WorkDirLocks().find(work_dir);
  if (it == WorkDirLocks().end()) return;
  close(it->second);
  WorkDirLocks().erase(it);
}

}  // namespace

StatusOr<std::string> CreateIncidentWorkDir(const std::string& out_dir, const std::string& tag) {
  const std::string prefix = out_dir + "/.incident-" + tag;
  std::vector<char> name(prefix.size() + 64);
  const int fd = CreateWriterTemp(prefix.c_str(), true, name.data(), name.size());
  if (fd < 0) {
    return ErrStatus("cannot create a working folder " + prefix + ".tmp.*: " + std::strerror(errno));
  }
  // mkdtemp creates 0700; the mode mkdir(0755) gives, as before.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0755 & ~mask);
  std::lock_guard<std::mutex> lock(work_dirs_mu);
  WorkDirLocks()[name.data()] = fd;
  return std::string(name.data());
}

StatusOr<std::string> PublishIncidentDir(const std::string& work_dir, const std::string& out_dir,
                                         const std::string& name) {
  for (int k = 1; k <= 1000; ++k) {
    const std::string dir = out_dir + "/" + name + (k > 1 ? "-" + std::to_string(k) : "");
    if (renameat2(AT_FDCWD, work_dir.c_str(), AT_FDCWD, dir.c_str(), RENAME_NOREPLACE) == 0) {
      ReleaseWorkDir(work_dir);
      return dir;
    }
    if (errno == EEXIST) continue;
    if (errno != EINVAL && errno != ENOSYS)
      return ErrStatus("cannot rename " + work_dir + " to " + dir + ": " + std::strerror(errno));
    // No RENAME_NOREPLACE on this file system: take the name with an empty
    // folder of our own (mkdir fails when it is taken), then rename over it.
    if (mkdir(dir.c_str(), 0755) != 0) {
      if (errno == EEXIST) continue;
      return ErrStatus("cannot create " + dir + ": " + std::strerror(errno));
    }
    if (rename(work_dir.c_str(), dir.c_str()) == 0) {
      ReleaseWorkDir(work_dir);
      return dir;
    }
    const int err = errno;
    rmdir(dir.c_str());
    return ErrStatus("cannot rename " + work_dir + " to " + dir + ": " + std::strerror(err));
  }
  return ErrStatus("cannot name " + work_dir + ": " + name + " and 999 more names taken");
}

void RemoveIncidentWorkDir(const std::string& work_dir) {
  std::error_code ec;
  std::filesystem::remove_all(work_dir, ec);
  ReleaseWorkDir(work_dir);  // after: a sweep never sees it unlocked
}

namespace {

// `.incident-<tag>.tmp.<boot>-<pid>.XXXXXX`, or an earlier monitor's
// `.incident-<tag>.tmp` (no owner: by age alone).
bool MatchWorkDir(void*, const char* name, char boot[9], long* pid) {
  if (std::strncmp(name, ".incident-", 10) != 0) return false;
  if (ParseWriterTempName(name, boot, pid)) return true;
  *pid = 0;
  const size_t n = std::strlen(name);
  return n > 14 && std::strcmp(name + n - 4, ".tmp") == 0;
}

int RemoveWorkDir(void*, int, const char* dir, const char* name) {
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(dir) / name, ec);
  return ec ? (ec.value() ? ec.value() : EIO) : 0;
}

void SayWorkDirRemoved(void*, const char* dir, const char* name, bool, const char* why) {
  std::fprintf(stderr, "aiprof monitor: removed %s, the working folder of an incident left unfinished: %s\n",
               TerminalSafe(std::string(dir) + "/" + name).c_str(), why);
}

void SayTempRemoved(const char* dir, const char* name, bool folder, const char* why) {
  std::fprintf(stderr, "aiprof: removed %s, a temporary %s left by a write that did not finish: %s\n",
               TerminalSafe(std::string(dir) + "/" + name).c_str(), folder ? "folder" : "file", why);
}

}  // namespace

void SayWriterTempRemovals() { SetWriterTempLog(&SayTempRemoved); }

int RemoveStaleIncidentWorkDirs(const std::string& out_dir) {
  WriterTempSweep sweep;
  sweep.match = &MatchWorkDir;
  sweep.folders = true;
  sweep.remove = &RemoveWorkDir;
  sweep.removed = &SayWorkDirRemoved;
  return SweepWriterTemps(out_dir.c_str(), sweep);
}

bool IsIncidentDirName(const std::string& name) {
  // 20261201T105601Z-1 or 20261201T105601Z-1-2
  if (name.size() < 18 || name[8] != 'T' || name[15] != 'Z' || name[16] != '-') return false;
  for (size_t i = 0; i < 15; ++i) {
    if (i != 8 && !std::isdigit(static_cast<unsigned char>(name[i]))) return false;
  }
  int dashes = 0;
  for (size_t i = 16; i < name.size(); ++i) {
    if (name[i] == '-') {
      if (++dashes > 2 || i + 1 == name.size() || name[i + 1] == '-') return false;
    } else if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
      return false;
    }
  }
  return true;
}

uint64_t TreeBytes(const std::string& path) {
  std::error_code ec;
  uint64_t total = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += static_cast<uint64_t>(st.st_size);
  }
  return total;
}

namespace {

// (UTC time, n, k) of an incident folder's name, compared as numbers.
std::tuple<std::string, long, long> IncidentOrder(const std::string& name) {
  const char* p = name.c_str() + 17;
  char* end = nullptr;
  const long n = std::strtol(p, &end, 10);
  const long k = *end == '-' ? std::strtol(end + 1, nullptr, 10) : 1;
  return {name.substr(0, 16), n, k};
}

}  // namespace

PruneResult PruneIncidentDirs(const std::string& out_dir, const IncidentRetention& retention,
                              std::deque<std::string>* own, int room, uint64_t room_bytes) {
  std::vector<std::string> others;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(out_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (IsIncidentDirName(name) && entry.is_directory(ec) && std::find(own->begin(), own->end(), name) == own->end())
      others.push_back(name);
  }
  std::sort(others.begin(), others.end(),
            [](const std::string& a, const std::string& b) { return IncidentOrder(a) < IncidentOrder(b); });
  // Oldest first; own names whose folder is gone (removed by hand) drop out.
  std::vector<std::pair<std::string, uint64_t>> all;
  for (const std::string& n : others) all.emplace_back(n, TreeBytes(out_dir + "/" + n));
  std::deque<std::string> present;
  for (const std::string& n : *own) {
    struct stat st;
    if (stat((out_dir + "/" + n).c_str(), &st) != 0) continue;
    all.emplace_back(n, TreeBytes(out_dir + "/" + n));
    present.push_back(n);
  }
  *own = std::move(present);
  PruneResult r;
  r.kept = all.size();
  for (const auto& [n, b] : all) r.kept_bytes += b;
  const auto over = [&] {
    if (r.kept == 0) return false;
    if (retention.count > 0 && r.kept + static_cast<size_t>(room) > static_cast<size_t>(retention.count)) return true;
    return retention.bytes > 0 && r.kept_bytes + room_bytes > retention.bytes;
  };
  // The newest folder stays (at start, room 0: the last one; else the one
  // about to be published is newer than all of them).
  const size_t removable = room > 0 ? all.size() : all.size() - std::min<size_t>(all.size(), 1);
  for (size_t i = 0; i < removable && over(); ++i) {
    const std::string path = out_dir + "/" + all[i].first;
    std::error_code rm;
    std::filesystem::remove_all(path, rm);
    struct stat st;
    if (rm && stat(path.c_str(), &st) == 0) {
      r.failed.push_back(all[i].first + ": " + rm.message());  // kept, counted as kept; the next one goes
      continue;
    }
    r.removed.push_back(all[i].first);
    --r.kept;
    r.kept_bytes -= all[i].second;
    if (auto it = std::find(own->begin(), own->end(), all[i].first); it != own->end()) own->erase(it);
  }
  return r;
}

std::vector<std::string> PruneServiceFiles(const std::string& dir, int keep) {
  std::vector<std::pair<int64_t, std::string>> files;  // (mtime ns, name)
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("aiprof-") || !name.ends_with(".aiprof")) continue;
    struct stat st;
    if (lstat(entry.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    files.emplace_back(static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, name);
  }
  std::vector<std::string> removed;
  if (keep <= 0 || files.size() <= static_cast<size_t>(keep)) return removed;
  std::sort(files.begin(), files.end());
  for (size_t i = 0; i + static_cast<size_t>(keep) < files.size(); ++i) {
    if (unlink((dir + "/" + files[i].second).c_str()) == 0) removed.push_back(files[i].second);
  }
  return removed;
}

std::string UtcStamp(int64_t unix_ms) {
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

Tree WindowStatsTree(const WindowStats& s) {
  Tree t = Tree::Map();
  t.Set("window_s", Tree::Number(static_cast<double>(s.window_ns) / 1e9));
  t.Set("covered_s", Tree::Number(static_cast<double>(s.covered_ns) / 1e9));
  t.Set("requests", Tree::Integer(static_cast<int64_t>(s.requests)));
  t.Set("errors", Tree::Integer(static_cast<int64_t>(s.errors)));
  t.Set("throughput_per_s", Tree::Number(s.throughput_per_s));
  if (s.requests > 0) {
    Tree lat = Tree::Map();
    lat.Set("p50", Tree::Number(s.p50_ns / 1e9));
    lat.Set("p90", Tree::Number(s.p90_ns / 1e9));
    lat.Set("p99", Tree::Number(s.p99_ns / 1e9));
    lat.Set("max", Tree::Number(s.max_ns / 1e9));
    lat.Set("mean", Tree::Number(s.mean_ns / 1e9));
    t.Set("latency_s", std::move(lat));
  }
  t.Set("steps", Tree::Integer(static_cast<int64_t>(s.steps)));
  if (s.steps > 0) {
    Tree st = Tree::Map();
    st.Set("p50", Tree::Number(s.step_p50_ns / 1e9));
    st.Set("p99", Tree::Number(s.step_p99_ns / 1e9));
    st.Set("max", Tree::Number(s.step_max_ns / 1e9));
    t.Set("step_time_s", std::move(st));
  }
  t.Set("cpu_util", s.cpu_util >= 0 ? Tree::Number(s.cpu_util) : Tree::Null());
  t.Set("rss_bytes", s.rss_bytes >= 0 ? Tree::Number(s.rss_bytes) : Tree::Null());
  t.Set("lost_records", Tree::Integer(static_cast<int64_t>(s.lost_records)));
  Tree counters = Tree::Map();
  for (const auto& [name, v] : s.counters) counters.Set(name, Tree::Number(v));
  t.Set("counters", std::move(counters));
  t.Set("quantiles", Tree::String(s.quantiles_exact ? "exact over the window, nearest rank"
                                                   : "DDSketch over the window's 64 parts, within 1% relative error"));
  return t;
}

Tree TriggerTree(const IncidentTrigger& tr) {
  Tree t = Tree::Map();
  t.Set("kind", Tree::String(tr.kind));
  t.Set("expression", Tree::String(tr.expression));
  t.Set("time_utc", Tree::String(UtcText(tr.unix_ms)));
  t.Set("monotonic_ns", Tree::Integer(static_cast<int64_t>(tr.monotonic_ns)));
  if (!tr.requested_by.empty()) t.Set("requested_by", Tree::String(tr.requested_by));
  if (tr.kind == "alert") {
    Tree values = Tree::List();
    for (const ComparisonOutcome& c : tr.result.comparisons) {
      Tree v = Tree::Map();
      v.Set("metric", Tree::String(c.metric));
      v.Set("value", Tree::Number(c.value));
      v.Set("op", Tree::String(c.op));
      v.Set("threshold", Tree::Number(c.threshold));
      const MetricInfo* info = FindMonitorMetric(c.metric);
      v.Set("unit", Tree::String(info ? MetricUnitName(info->unit) : "number"));
      v.Set("holds", Tree::Bool(c.holds));
      values.Push(std::move(v));
    }
    t.Set("comparisons", std::move(values));
    Tree missing = Tree::List();
    for (const std::string& m : tr.result.missing_metrics) missing.Push(Tree::String(m));
    t.Set("metrics_without_data", std::move(missing));
  }
  t.Set("window", WindowStatsTree(tr.window));
  return t;
}

namespace {

// `v` in the metric's unit, with `extra` more digits than usual.
std::string ValueText(const std::string& metric, double v, int extra = 0) {
  const MetricInfo* info = FindMonitorMetric(metric);
  char buf[64];
  switch (info ? info->unit : MetricUnit::kNumber) {
    case MetricUnit::kNanoseconds:
      if (v >= 1e9) {
        std::snprintf(buf, sizeof(buf), "%.*g s", 3 + extra, v / 1e9);
      } else {
        std::snprintf(buf, sizeof(buf), "%.*g ms", 3 + extra, v / 1e6);
      }
      break;
    case MetricUnit::kRatio: std::snprintf(buf, sizeof(buf), "%.*f%%", 1 + extra, v * 100); break;
    case MetricUnit::kPerSecond: std::snprintf(buf, sizeof(buf), "%.*g/s", 4 + extra, v); break;
    case MetricUnit::kBytes: std::snprintf(buf, sizeof(buf), "%.*f MB", 1 + extra, v / 1e6); break;
    default: std::snprintf(buf, sizeof(buf), "%.*g", 4 + extra, v); break;
  }
  return buf;
}

// "= value (op threshold)", with as many digits as it takes for a value
// that differs from its threshold to read differently: `error_rate > 1.99%`
// held at 1.996% and said "error_rate = 2.0% (> 2.0%)".
std::string ValueAgainstThreshold(const ComparisonOutcome& c) {
  std::string value = ValueText(c.metric, c.value), threshold = ValueText(c.metric, c.threshold);
  for (int extra = 1; extra <= 12 && value == threshold && c.value != c.threshold; ++extra) {
    value = ValueText(c.metric, c.value, extra);
    threshold = ValueText(c.metric, c.threshold, extra);
  }
  return " = " + value + " (" + c.op + " " + threshold + ")";
}

}  // namespace

std::string DescribeTrigger(const IncidentTrigger& t) {
  if (t.kind == "webhook") return "fired in Alertmanager (POST /alert)";
  if (t.kind == "target_exited") return "the process ended: " + t.expression;
  if (t.kind != "alert") return t.kind + ": " + t.expression;
  std::string out;
  for (const ComparisonOutcome& c : t.result.comparisons) {
    if (!c.holds) continue;
    if (!out.empty()) out += ", ";
    out += c.metric + ValueAgainstThreshold(c);
  }
  return out.empty() ? t.expression : out;
}

}  // namespace aiprof
