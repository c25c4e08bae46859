#include "src/monitor/live_client.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>

#include "src/base/clock.h"

namespace aiprof {
namespace {

// The real uid of `pid` (from /proc/<pid>/status), or -1.
int ProcessUid(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Uid:", 0) == 0) return std::atoi(line.c_str() + 4);
  }
  return -1;
}

std::string Text(const char* field, size_t cap) { return std::string(field, strnlen(field, cap)); }

bool ProcessGone(int pid) { return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH; }

// Segments left by monitors that died (SIGKILL, OOM) whatever pid they
// watched: removed when the monitor that created them is gone. Others'
// segments in the sticky /dev/shm cannot be removed and are left alone.
void RemoveStaleSegments() {
  DIR* d = opendir("/dev/shm");
  if (!d) return;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("aiprof-live-", 0) != 0) continue;
    const std::string path = "/dev/shm/" + name;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    live::Header h{};
    const bool valid = pread(fd, &h, sizeof(h), 0) == static_cast<ssize_t>(sizeof(h)) && h.magic == live::kMagic;
    close(fd);
    if (valid && ProcessGone(h.monitor_pid)) unlink(path.c_str());
  }
  closedir(d);
}

// The value of `name` in `pid`'s environment at its start (nullopt: not set,
// or /proc/<pid>/environ unreadable, e.g. another user's process).
std::optional<std::string> EnvironOf(int pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  for (std::string entry; std::getline(in, entry, '\0');) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

}  // namespace

std::string WhyNotAttached(int pid) {
  const auto env_is = [pid](const char* name, const char* value) {
    std::optional<std::string> v = EnvironOf(pid, name);
    return v && (value == nullptr || *v == value);
  };
  if (env_is("AIPROF_LIVE", "0"))
    return "it runs with AIPROF_LIVE=0 (its environment), which turns the SDK's live thread off";
  if (env_is("AIPROF_MONITOR", nullptr))
    return "it runs the SDK's in-process monitor (AIPROF_MONITOR in its environment)";
  if (env_is("AIPROF_ENABLE", "0") || env_is("AIPROF_MODE", "off")) {
    return "its SDK is off (AIPROF_ENABLE=0 or AIPROF_MODE=off in its environment)";
  }
  // Which of aiprof's files the process has mapped.
  bool sdk = false, package = false;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    sdk = sdk || line.find("libaiprof_sdk") != std::string::npos || line.find("/aiprof/_sdk.") != std::string::npos;
    package = package || line.find("/aiprof/_aiprof.") != std::string::npos;
  }
  std::string exe(4096, '\0');
  const ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), exe.data(), exe.size() - 1);
  exe.resize(n > 0 ? static_cast<size_t>(n) : 0);
  const bool python = exe.substr(exe.rfind('/') + 1).starts_with("python");
  if (sdk) {
    return "its SDK is loaded but did not map the segment: it sees another /dev/shm (a container without the "
           "shared /dev/shm), or runs an aiprof SDK of another version";
  }
  if (python && package) {
    return "the Python process imported the aiprof package but not its SDK runtime: an aiprof package built "
           "without the SDK (aiprof.has_sdk is False), or one older than this monitor, whose SDK started at the "
           "first SDK call (e.g. the first aiprof.request: no request served yet)";
  }
  if (python) {
    return "the Python process has not imported aiprof (yet): `import aiprof` starts the SDK's live thread (a "
           "service that imports it late, or only in a request handler, attaches from then on)";
  }
  return "the process has not loaded the aiprof SDK (no libaiprof_sdk or aiprof._sdk mapped); or it links the SDK "
         "statically and set AIPROF_LIVE=0, AIPROF_MONITOR, AIPROF_ENABLE=0 or AIPROF_MODE=off itself, or it sees "
         "another /dev/shm";
}

StatusOr<std::unique_ptr<LiveClient>> LiveClient::Create(int pid) {
  RemoveStaleSegments();
  const std::string path = "/dev/shm/aiprof-live-" + std::to_string(pid);
  int fd = -1;
  for (int attempt = 0; attempt < 2 && fd < 0; ++attempt) {
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0 || errno != EEXIST) break;
    // Left by an earlier monitor: replace it if that monitor is gone.
    int old = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int32_t owner = 0;
    if (old >= 0) {
      live::Header h{};
      if (pread(old, &h, sizeof(h), 0) == static_cast<ssize_t>(sizeof(h)) && h.magic == live::kMagic)
        owner = h.monitor_pid;
      close(old);
    }
    if (owner > 0 && owner != getpid() && (kill(owner, 0) == 0 || errno == EPERM)) {
      return ErrStatus("another aiprof monitor (pid " + std::to_string(owner) + ") is watching pid " +
                       std::to_string(pid) + " (" + path + ")");
    }
    unlink(path.c_str());
  }
  if (fd < 0) return ErrStatus("cannot create " + path + ": " + std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(live::kSegmentBytes)) != 0) {
    const int err = errno;
    close(fd);
    unlink(path.c_str());
    return ErrStatus("cannot size " + path + ": " + std::strerror(err));
  }
  // The SDK maps only a segment owned by its own user: a root monitor hands
  // the segment to the service's user.
  const int uid = ProcessUid(pid);
  if (uid >= 0 && static_cast<uid_t>(uid) != geteuid()) {
    if (fchown(fd, static_cast<uid_t>(uid), static_cast<gid_t>(-1)) != 0) {
      close(fd);
      unlink(path.c_str());
      return ErrStatus("pid " + std::to_string(pid) + " runs as another user (uid " + std::to_string(uid) +
                       "): run aiprof monitor as that user");
    }
  }
  struct stat st;
  const ino_t ino = fstat(fd, &st) == 0 ? st.st_ino : 0;
  void* p = mmap(nullptr, live::kSegmentBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    unlink(path.c_str());
    return ErrStatus("cannot map " + path + ": " + std::strerror(errno));
  }
  auto* h = static_cast<live::Header*>(p);
  h->version = live::kVersion;
  h->header_bytes = live::kHeaderBytes;
  h->capacity = live::kCapacity;
  h->record_bytes = sizeof(live::Record);
  h->monitor_pid = static_cast<int32_t>(getpid());
  h->target_pid = static_cast<int32_t>(pid);
  __atomic_store_n(&h->heartbeat_ns, MonotonicNs(), __ATOMIC_RELAXED);
  // The magic last: the SDK checks it first.
  __atomic_store_n(&h->magic, live::kMagic, __ATOMIC_RELEASE);
  return std::unique_ptr<LiveClient>(new LiveClient(pid, path, h, ino));
}

LiveClient::~LiveClient() {
  // An SDK still on this mapping (its file removed and replaced) detaches.
  __atomic_store_n(&header_->detach, 1, __ATOMIC_RELEASE);
  munmap(header_, live::kSegmentBytes);
  if (!SegmentGone()) unlink(path_.c_str());  // never another monitor's segment
}

bool LiveClient::SegmentGone() const {
  struct stat st;
  return stat(path_.c_str(), &st) != 0 || st.st_ino != ino_;
}

bool LiveClient::attached() const { return __atomic_load_n(&header_->attached, __ATOMIC_ACQUIRE) != 0; }

Status LiveClient::WaitAttached(int64_t timeout_ns, const std::function<bool()>& alive) {
  const int64_t deadline = MonotonicNs() + timeout_ns;
  while (!attached()) {
    if (!alive()) return ErrStatus("pid " + std::to_string(pid_) + " exited before its SDK attached");
    if (MonotonicNs() > deadline) {
      return ErrStatus("pid " + std::to_string(pid_) + " did not attach to " + path_ + " within " +
                       std::to_string(timeout_ns / 1000000000) + " s: " + WhyNotAttached(pid_));
    }
    Heartbeat();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Whatever was published before attaching is read from the start.
  return OkStatus();
}

std::string LiveClient::CounterName(uint32_t index) const {
  if (index >= live::kCounterNames || __atomic_load_n(&header_->counter_names[index].used, __ATOMIC_ACQUIRE) == 0)
    return "";
  std::string name = Text(header_->counter_names[index].name, sizeof(header_->counter_names[index].name));
  return CounterNameCut(index) ? name + "~" + std::to_string(index) : name;
}

bool LiveClient::CounterNameCut(uint32_t index) const {
  return index < live::kCounterNames &&
         __atomic_load_n(&header_->counter_names[index].used, __ATOMIC_ACQUIRE) == live::kNameCut;
}

uint64_t LiveClient::counter_samples_dropped() const {
  return __atomic_load_n(&header_->counter_samples_dropped, __ATOMIC_RELAXED);
}

void LiveClient::Heartbeat() { __atomic_store_n(&header_->heartbeat_ns, MonotonicNs(), __ATOMIC_RELEASE); }

Status LiveClient::RunCommand(live::Command command, const std::string& path, int64_t timeout_ns,
                              const std::function<bool()>& cancelled) {
  std::lock_guard<std::mutex> lock(command_mu_);
  if (path.size() >= live::kPathBytes) return ErrStatus("path too long for the live channel: " + path);
  std::memset(header_->command_path, 0, sizeof(header_->command_path));
  std::memcpy(header_->command_path, path.data(), path.size());
  __atomic_store_n(&header_->command, static_cast<uint32_t>(command), __ATOMIC_RELAXED);
  const uint32_t seq = __atomic_load_n(&header_->command_seq, __ATOMIC_RELAXED) + 1;
  __atomic_store_n(&header_->command_seq, seq, __ATOMIC_RELEASE);
  const int64_t deadline = MonotonicNs() + timeout_ns;
  while (__atomic_load_n(&header_->ack_seq, __ATOMIC_ACQUIRE) != seq) {
    if (MonotonicNs() > deadline)
      return ErrStatus("pid " + std::to_string(pid_) + " did not answer the live channel's command");
    if (kill(pid_, 0) != 0 && errno == ESRCH) return ErrStatus("pid " + std::to_string(pid_) + " exited");
    if (cancelled && cancelled()) return ErrStatus("not waited for: the monitor is stopping");
    Heartbeat();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const int status = __atomic_load_n(&header_->ack_status, __ATOMIC_RELAXED);
  if (status != 0) return ErrStatus("pid " + std::to_string(pid_) + ": " + std::strerror(status));
  return OkStatus();
}

bool LiveClient::framework_available() const {
  return __atomic_load_n(&header_->framework_state, __ATOMIC_ACQUIRE) != 0;
}

std::string LiveClient::sdk_mode() const { return Text(header_->sdk_mode, sizeof(header_->sdk_mode)); }

int LiveClient::fatal_signal() const {
  return static_cast<int>(__atomic_load_n(&header_->fatal_signal, __ATOMIC_ACQUIRE));
}

std::string LiveClient::sdk_output_path() const {
  return Text(header_->sdk_output_path, sizeof(header_->sdk_output_path));
}

}  // namespace aiprof
