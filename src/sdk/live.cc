// The SDK's side of the live channel (src/sdk/live_channel.h): the live
// thread that maps a monitor's segment when one appears, the records the
// hot path pushes while one is attached, and the control commands.
//
// Cost while no monitor is attached: the entry points test one relaxed
// pointer load (g_live_header == null) after their usual work; the live
// thread wakes every kPollIdleMs and makes one open() that fails. While
// attached, request_begin/end, iteration_start/end and counter also read
// CLOCK_MONOTONIC and push a 32-byte record (README "aiprof monitor" has the
// measured figures).
//
// The segment is mapped at one address reserved for the whole process life:
// on detach that address is re-mapped to private anonymous memory (MAP_FIXED)
// rather than unmapped, so a producer that loaded the pointer just before
// the detach writes into harmless memory instead of faulting.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define AIPROF_NO_INLINE_CHECK
#include "aiprof/aiprof.h"
#include "src/sdk/live_channel.h"
#include "src/sdk/sdk_internal.h"

namespace aiprof::sdkrt {

live::Header* g_live_header = nullptr;

namespace {

constexpr uint64_t kInflightSlots = 1u << 16;

struct Inflight {
  uint64_t id;
  int64_t begin_ns;
};

LiveHooks g_hooks;
void* g_reserved = nullptr;        // kSegmentBytes reserved for the segment
bool g_mapped_shared = false;      // a monitor's segment is mapped there now
Inflight* g_inflight = nullptr;    // request id -> begin time (while attached)
pthread_mutex_t g_counter_mu = PTHREAD_MUTEX_INITIALIZER;
// Counter name pointers -> index in the segment's table (open addressing).
const char* g_counter_ptrs[live::kCounterNames * 2] = {};
uint32_t g_counter_index[live::kCounterNames * 2] = {};
__thread int64_t t_step_begin_ns __attribute__((tls_model("initial-exec"))) = 0;
bool g_live_disabled = false;
ino_t g_segment_ino = 0;          // the mapped segment's inode
dev_t g_segment_dev = 0;          // and its file system
bool g_signal_hooks = false;      // fatal-signal handlers installed
int (*g_framework_handler)(int, const char*) = nullptr;
SelfMonitorHook g_self_monitor = nullptr;

void SleepMs(int ms) {
  timespec ts{ms / 1000, static_cast<long>(ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void SegmentName(char* out, size_t cap, long pid) { snprintf(out, cap, "/dev/shm/aiprof-live-%ld", pid); }

bool Reserve() {
  if (g_reserved) return true;
  void* p = mmap(nullptr, live::kSegmentBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  g_reserved = p;
  return true;
}

bool EnsureInflight() {
  if (g_inflight) return true;
  void* p = mmap(nullptr, kInflightSlots * sizeof(Inflight), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  g_inflight = static_cast<Inflight*>(p);
  return true;
}

void ResetCounterNames() {
  pthread_mutex_lock(&g_counter_mu);
  for (const char*& p : g_counter_ptrs) __atomic_store_n(&p, static_cast<const char*>(nullptr), __ATOMIC_RELAXED);
  pthread_mutex_unlock(&g_counter_mu);
}

void FillSdkFields(live::Header* h) {
  __atomic_store_n(&h->sdk_abi, static_cast<uint32_t>(AIPROF_SDK_ABI_VERSION), __ATOMIC_RELAXED);
  __atomic_store_n(&h->sdk_pid, static_cast<int64_t>(getpid()), __ATOMIC_RELAXED);
  __atomic_store_n(&h->attached_ns, MonotonicNs(), __ATOMIC_RELAXED);
  snprintf(h->sdk_mode, sizeof(h->sdk_mode), "%s", g_hooks.mode ? g_hooks.mode() : "record");
  snprintf(h->sdk_output_path, sizeof(h->sdk_output_path), "%s", SdkOutputPath());
  __atomic_store_n(&h->framework_state, __atomic_load_n(&g_framework_handler, __ATOMIC_ACQUIRE) ? 1u : 0u,
                   __ATOMIC_RELEASE);
}

// A fatal signal while attached: noted in the segment so that the monitor can
// say how the process died, then the default action (SA_RESETHAND: the
// disposition is already the default again).
void OnFatalSignal(int sig) {
  live::Header* h = __atomic_load_n(&g_live_header, __ATOMIC_ACQUIRE);
  if (h) __atomic_store_n(&h->fatal_signal, static_cast<uint32_t>(sig), __ATOMIC_RELEASE);
  raise(sig);
}

// Signals whose default action ends the process, hooked only where the
// program left that default (its own handlers are never replaced).
void InstallSignalHooks() {
  if (g_signal_hooks) return;
  g_signal_hooks = true;
  static const int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGINT, SIGHUP, SIGQUIT};
  for (int sig : kSignals) {
    struct sigaction old;
    if (sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = &OnFatalSignal;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

// Whether the monitor's heartbeat in `h` is too old: the monitor died, or is
// stopped (^Z, a paused VM).
bool HeartbeatStale(live::Header* h) {
  return MonotonicNs() - __atomic_load_n(&h->heartbeat_ns, __ATOMIC_ACQUIRE) > live::kHeartbeatStaleNs;
}

// Maps /dev/shm/aiprof-live-<pid> when a monitor created it for this process
// and its heartbeat is fresh: a segment whose heartbeat is stale was
// detached from and is attached again once its monitor beats again (it was
// re-attached at once, stale, detached again, in a loop that took a whole
// core for as long as the monitor was stopped: trial_races B).
bool TryAttach() {
  char path[64];
  SegmentName(path, sizeof(path), static_cast<long>(getpid()));
  int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == live::kSegmentBytes && st.st_uid == geteuid() &&
            Reserve() && EnsureInflight();
  void* p = MAP_FAILED;
  if (ok) p = mmap(g_reserved, live::kSegmentBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return false;
  live::Header* h = static_cast<live::Header*>(p);
  const bool valid = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == live::kMagic && h->version == live::kVersion &&
                     h->capacity == live::kCapacity && h->header_bytes == live::kHeaderBytes &&
                     h->target_pid == static_cast<int32_t>(getpid()) &&
                     __atomic_load_n(&h->detach, __ATOMIC_ACQUIRE) == 0 && !HeartbeatStale(h);
  if (!valid) {
    mmap(g_reserved, live::kSegmentBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    return false;
  }
  g_mapped_shared = true;
  g_segment_ino = st.st_ino;
  g_segment_dev = st.st_dev;
  if (!getenv("AIPROF_LIVE_SIGNALS") || strcmp(getenv("AIPROF_LIVE_SIGNALS"), "0") != 0) InstallSignalHooks();
  ResetCounterNames();
  FillSdkFields(h);
  __atomic_store_n(&h->attached, 1, __ATOMIC_RELEASE);
  __atomic_store_n(&g_live_header, h, __ATOMIC_RELEASE);
  return true;
}

void Detach() {
  __atomic_store_n(&g_live_header, static_cast<live::Header*>(nullptr), __ATOMIC_RELEASE);
  if (g_mapped_shared) {
    mmap(g_reserved, live::kSegmentBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    g_mapped_shared = false;
  }
}

void RunCommand(live::Header* h) {
  const uint32_t seq = __atomic_load_n(&h->command_seq, __ATOMIC_ACQUIRE);
  if (seq == __atomic_load_n(&h->ack_seq, __ATOMIC_RELAXED)) return;
  const uint32_t cmd = __atomic_load_n(&h->command, __ATOMIC_RELAXED);
  char path[live::kPathBytes];
  memcpy(path, h->command_path, sizeof(path));
  path[sizeof(path) - 1] = '\0';
  int status = 0;
  if (cmd == live::kCmdFlush) {
    status = path[0] ? g_hooks.write_to(path) : EINVAL;
  } else if (cmd == live::kCmdFrameworkOn || cmd == live::kCmdFrameworkOff) {
    int (*handler)(int, const char*) = __atomic_load_n(&g_framework_handler, __ATOMIC_ACQUIRE);
    if (!handler) {
      status = ENOTSUP;  // no framework layer in this process
    } else {
      status = handler(cmd == live::kCmdFrameworkOn ? 1 : 0, path);
      __atomic_store_n(&h->framework_state, cmd == live::kCmdFrameworkOn && status == 0 ? 2u : 1u, __ATOMIC_RELEASE);
    }
  } else {
    status = EINVAL;
  }
  __atomic_store_n(&h->ack_status, status, __ATOMIC_RELAXED);
  __atomic_store_n(&h->ack_seq, seq, __ATOMIC_RELEASE);
}

void* LiveThreadMain(void* started) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  pthread_setname_np(pthread_self(), "aiprof-live");
  sem_post(static_cast<sem_t*>(started));
  for (;;) {
    live::Header* h = g_mapped_shared ? __atomic_load_n(&g_live_header, __ATOMIC_ACQUIRE) : nullptr;
    if (!h) {
      if (g_self_monitor) {
        // In-process monitor (AIPROF_MONITOR): it owns the channel; the
        // hook returns how long to sleep.
        SleepMs(g_self_monitor());
        continue;
      }
      if (!TryAttach()) SleepMs(live::kPollIdleMs);
      continue;
    }
    RunCommand(h);
    char path[64];
    SegmentName(path, sizeof(path), static_cast<long>(getpid()));
    const bool stale = HeartbeatStale(h);
    // The mapped segment's file is still the one at its path: not removed
    // (a cleaner, systemd's RemoveIPC=), nor replaced by another monitor's
    // file of the same name, which the next TryAttach maps instead.
    struct stat st;
    const bool same_file = stat(path, &st) == 0 && st.st_ino == g_segment_ino && st.st_dev == g_segment_dev;
    if (__atomic_load_n(&h->detach, __ATOMIC_ACQUIRE) != 0 || stale || !same_file) {
      // A monitor that died (SIGKILL) left its segment: removed here unless
      // a new monitor has replaced it meanwhile (another inode).
      const int32_t monitor = h->monitor_pid;
      Detach();
      if (stale && same_file && monitor > 0 && kill(monitor, 0) != 0 && errno == ESRCH) unlink(path);
      continue;
    }
    SleepMs(live::kPollAttachedMs);
  }
  return nullptr;
}

// Returns once the thread runs its loop (or after a second): a fork() right
// after initialisation then finds the thread in its loop, which allocates
// nothing, rather than in the C library's or a sanitizer's thread start-up,
// which may hold an allocator lock that the child would inherit locked.
// (GCC 12's AddressSanitizer does not take its allocator's locks around
// fork(): a child forked while another thread allocates can hang.)
sem_t g_started;  // global: a thread late past the deadline still posts to live memory

void StartThread() {
  sem_t& started = g_started;
  sem_init(&started, 0, 0);
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  const bool created = pthread_create(&thread, &attr, &LiveThreadMain, &started) == 0;
  pthread_attr_destroy(&attr);
  if (created) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 1;
    while (sem_timedwait(&started, &deadline) != 0 && errno == EINTR) {
    }
  }
}

// The slot of `name` in the segment's table of counter names: the one it
// has there already, or the next free one (UINT32_MAX: the table is full).
// Looked up first because the SDK may attach again to a segment whose table
// it filled before (the monitor's heartbeat went stale: the monitor was
// stopped for more than 10 s) with its pointer map reset: writing every name
// again filled the 64 slots with copies, and then every counter was dropped
// as if the service had set more than 64 names (trial_races B). A cut name
// matches on its text, its cut flag and the hash of its full name, so that
// two names cut to the same text keep their own slots. Under g_counter_mu.
uint32_t NameSlot(live::Header* h, const char* name) {
  char text[sizeof(live::CounterName::name)] = {};
  const int n = snprintf(text, sizeof(text), "%s", name);
  const bool cut = n >= static_cast<int>(sizeof(text));
  if (cut) text[live::Utf8CutLength(text, strlen(text))] = '\0';
  const uint32_t flag = cut ? live::kNameCut : live::kNameWritten;
  const uint64_t hash = Fnv1a64(name);
  uint32_t used = __atomic_load_n(&h->counter_names_used, __ATOMIC_ACQUIRE);
  if (used > live::kCounterNames) used = live::kCounterNames;
  for (uint32_t i = 0; i < used; ++i) {
    live::CounterName& slot = h->counter_names[i];
    if (__atomic_load_n(&slot.used, __ATOMIC_ACQUIRE) == flag &&
        __atomic_load_n(&h->counter_name_hashes[i], __ATOMIC_RELAXED) == hash &&
        strncmp(slot.name, text, sizeof(text)) == 0)
      return i;
  }
  if (used >= live::kCounterNames) return UINT32_MAX;
  memcpy(h->counter_names[used].name, text, sizeof(text));
  __atomic_store_n(&h->counter_name_hashes[used], hash, __ATOMIC_RELAXED);
  __atomic_store_n(&h->counter_names[used].used, flag, __ATOMIC_RELEASE);
  __atomic_store_n(&h->counter_names_used, used + 1, __ATOMIC_RELEASE);
  return used;
}

uint32_t CounterIndex(live::Header* h, const char* name) {
  const size_t mask = live::kCounterNames * 2 - 1;
  size_t j = (reinterpret_cast<uintptr_t>(name) >> 3) & mask;
  for (size_t probe = 0; probe <= mask; ++probe, j = (j + 1) & mask) {
    const char* p = __atomic_load_n(&g_counter_ptrs[j], __ATOMIC_ACQUIRE);
    if (p == name) return __atomic_load_n(&g_counter_index[j], __ATOMIC_RELAXED);
    if (p == nullptr) break;
  }
  // First sample of this name: claim a slot under the lock.
  pthread_mutex_lock(&g_counter_mu);
  uint32_t index = UINT32_MAX;
  j = (reinterpret_cast<uintptr_t>(name) >> 3) & mask;
  for (size_t probe = 0; probe <= mask; ++probe, j = (j + 1) & mask) {
    const char* p = g_counter_ptrs[j];
    if (p == name) {
      index = g_counter_index[j];
      break;
    }
    if (p == nullptr) {
      const uint32_t slot = NameSlot(h, name);
      if (slot == UINT32_MAX) break;
      g_counter_index[j] = slot;
      __atomic_store_n(&g_counter_ptrs[j], name, __ATOMIC_RELEASE);
      index = slot;
      break;
    }
  }
  pthread_mutex_unlock(&g_counter_mu);
  return index;
}

}  // namespace

void LiveInit(const LiveHooks& hooks) {
  g_hooks = hooks;
  const char* v = getenv("AIPROF_LIVE");
  g_live_disabled = v && strcmp(v, "0") == 0;
  g_self_monitor = SelfMonitorInit();
  if (!g_live_disabled || g_self_monitor) StartThread();
}

void LiveForkChild() {
  // The parent's monitor watches the parent: the child starts detached, and
  // looks for a segment of its own pid.
  Detach();
  __atomic_store_n(&g_live_header, static_cast<live::Header*>(nullptr), __ATOMIC_RELEASE);
  g_self_monitor = SelfMonitorForkChild();
  if (!g_live_disabled || g_self_monitor) StartThread();
}

void AttachPrivateChannel(live::Header* h) {
  EnsureInflight();
  FillSdkFields(h);
  __atomic_store_n(&h->attached, 1, __ATOMIC_RELEASE);
  __atomic_store_n(&g_live_header, h, __ATOMIC_RELEASE);
}

int LiveWriteFlightRecorder(const char* path) { return g_hooks.write_to(path); }

void LiveRequestBegin(uint64_t id) {
  if (!g_inflight) return;
  Inflight* slot = g_inflight + (id & (kInflightSlots - 1));
  __atomic_store_n(&slot->begin_ns, MonotonicNs(), __ATOMIC_RELAXED);
  __atomic_store_n(&slot->id, id, __ATOMIC_RELEASE);
}

void LiveRequestEnd(uint64_t id, bool error) {
  live::Header* h = __atomic_load_n(&g_live_header, __ATOMIC_ACQUIRE);
  if (!h || !g_inflight) return;
  Inflight* slot = g_inflight + (id & (kInflightSlots - 1));
  if (__atomic_load_n(&slot->id, __ATOMIC_ACQUIRE) != id) return;  // began before the monitor attached
  const int64_t begin = __atomic_load_n(&slot->begin_ns, __ATOMIC_RELAXED);
  const int64_t now = MonotonicNs();
  live::Push(h, live::kRecRequest, now, now - begin, error ? static_cast<uint32_t>(live::kFlagError) : 0u);
}

void LiveStepStart() { t_step_begin_ns = MonotonicNs(); }

void LiveStepEnd() {
  live::Header* h = __atomic_load_n(&g_live_header, __ATOMIC_ACQUIRE);
  if (!h || t_step_begin_ns == 0) return;
  const int64_t now = MonotonicNs();
  live::Push(h, live::kRecStep, now, now - t_step_begin_ns, 0);
  t_step_begin_ns = 0;
}

void LiveCounter(const char* name, double value) {
  live::Header* h = __atomic_load_n(&g_live_header, __ATOMIC_ACQUIRE);
  if (!h || !name) return;
  const uint32_t index = CounterIndex(h, name);
  if (index == UINT32_MAX) {  // more than kCounterNames names: counted, the monitor says so
    __atomic_fetch_add(&h->counter_samples_dropped, 1, __ATOMIC_RELAXED);
    return;
  }
  int64_t bits;
  memcpy(&bits, &value, sizeof(bits));
  live::Push(h, live::kRecCounter, MonotonicNs(), bits, index);
}

}  // namespace aiprof::sdkrt

extern "C" void aiprof_set_framework_handler(int (*handler)(int start, const char* dir)) {
  using namespace aiprof::sdkrt;  // NOLINT
  __atomic_store_n(&g_framework_handler, handler, __ATOMIC_RELEASE);
  if (aiprof::live::Header* h = __atomic_load_n(&g_live_header, __ATOMIC_ACQUIRE)) {
    __atomic_store_n(&h->framework_state, handler ? 1u : 0u, __ATOMIC_RELEASE);
  }
}
