// Internals shared by the SDK runtime (runtime.cc) and its file writer
// (event_file.cc). Neither links anything of ours nor libstdc++: memory is
// malloc/mmap, containers are the small Vec below, no exceptions.
#ifndef AIPROF_SRC_SDK_SDK_INTERNAL_H_
#define AIPROF_SRC_SDK_SDK_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <type_traits>

#include "src/sdk/event_stream.h"

namespace aiprof::sdkrt {

// CLOCK_MONOTONIC in nanoseconds: the SDK's one clock (records, heartbeats,
// the live channel), shared by runtime.cc, live.cc and self_monitor.cc.
// FNV-1a (64 bits) of a NUL-terminated string: the intern table's hash and
// the live channel's counter-name hash (live::Header::counter_name_hashes).
inline uint64_t Fnv1a64(const char* s) {
  uint64_t h = 14695981039346656037ull;
  for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull;
  return h;
}

inline int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// A growable array of trivially copyable T on malloc (no operator new, so the
// runtime does not need libstdc++). Allocation failure leaves it unchanged and
// sets failed().
template <typename T>
class Vec {
  static_assert(std::is_trivially_copyable_v<T>, "Vec holds trivially copyable values");

 public:
  Vec() = default;
  Vec(const Vec&) = delete;
  Vec& operator=(const Vec&) = delete;
  ~Vec() { free(data_); }
  bool push_back(const T& v) {
    if (size_ == cap_ && !reserve(cap_ ? cap_ * 2 : 16)) return false;
    data_[size_++] = v;
    return true;
  }
  bool reserve(size_t n) {
    if (n <= cap_) return true;
    T* p = static_cast<T*>(realloc(data_, n * sizeof(T)));
    if (!p) {
      failed_ = true;
      return false;
    }
    data_ = p;
    cap_ = n;
    return true;
  }
  bool resize(size_t n) {
    if (!reserve(n)) return false;
    if (n > size_) memset(static_cast<void*>(data_ + size_), 0, (n - size_) * sizeof(T));
    size_ = n;
    return true;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T* data() { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool failed() const { return failed_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0, cap_ = 0;
  bool failed_ = false;
};

// A contiguous run of committed events.
struct EventRun {
  const Event* events;
  size_t count;
};

// One thread's events as the writer sees them, oldest first. A buffer that
// served several threads in turn gives one view per thread.
struct ThreadView {
  int64_t tid = 0;
  char name[64] = {};
  const EventRun* runs = nullptr;
  size_t run_count = 0;
  uint64_t recorded = 0;     // events the thread recorded in all
  uint64_t overwritten = 0;  // ring mode: older events no longer held
};

// How ticks map to CLOCK_MONOTONIC: ns = base_ns + ticks * ns_per_tick.
struct ClockParams {
  bool tsc = false;
  int64_t base_ns = 0;
  double ns_per_tick = 1.0;
  // Fixed point: ns = base_ns + (ticks * mult) >> 32.
  uint64_t mult = 1ull << 32;
};

struct WriteRequest {
  const ThreadView* threads = nullptr;
  size_t thread_count = 0;
  ClockParams clock;
  int64_t pid = 0;
  int32_t rank = -1;
  const char* process_name = "";
  const char* mode = "record";
  double ring_mb = 0;
};

// Writes the event file (event_stream.h) for `req` to `path` atomically.
// Returns 0, or an errno value.
int WriteEventFile(const WriteRequest& req, const char* path);

// Removes from `dir` the temporary files of event-file writes whose writer
// is gone (killed mid-write), by the rule of src/base/libc/writer_temp.h: names
// of FileWriter's form (`<file>.tmp.<boot id>-<pid>.XXXXXX`), no magic, not
// locked, and written on this boot by a dead pid or left untouched 24
// hours; earlier SDKs' `<file>.tmp.XXXXXX` holding an event file's header
// without magic, unlocked and untouched 24 hours (docs/sdk.md, "Temporary
// files of killed writes"). Each removal is said on stderr. WriteEventFile
// calls it once per folder. Returns how many it removed.
int RemoveDeadWritersTempFiles(const char* dir);

// --- Live channel (live.cc, self_monitor.cc; layout in live_channel.h) ------

}  // namespace aiprof::sdkrt
namespace aiprof::live {
struct Header;
}
namespace aiprof::sdkrt {

// What the live thread needs from the runtime.
struct LiveHooks {
  int (*write_to)(const char* path) = nullptr;  // 0 or an errno value
  const char* (*mode)() = nullptr;              // "ring" or "record"
};

// Non-null while a monitor's (or the in-process monitor's) channel is
// attached: the single check the entry points make.
extern live::Header* g_live_header;
inline bool LiveAttached() { return __builtin_expect(__atomic_load_n(&g_live_header, __ATOMIC_RELAXED) != nullptr, 0); }

// At Init: starts the live thread unless AIPROF_LIVE=0 (and AIPROF_MONITOR is unset).
void LiveInit(const LiveHooks& hooks);
// In a fork()ed child: detached, with a live thread of its own.
void LiveForkChild();
void LiveRequestBegin(uint64_t id);
void LiveRequestEnd(uint64_t id, bool error);
void LiveStepStart();
void LiveStepEnd();
void LiveCounter(const char* name, double value);
// Attaches a channel owned by this process (the in-process monitor).
void AttachPrivateChannel(live::Header* h);
// Writes the flight recorder to `path`; 0 or an errno value.
int LiveWriteFlightRecorder(const char* path);
// The configured output file (runtime.cc).
const char* SdkOutputPath();

// The in-process monitor's tick, run by the live thread; returns the sleep in ms.
using SelfMonitorHook = int (*)();
// Reads AIPROF_MONITOR; null when unset or malformed (the error goes to stderr).
SelfMonitorHook SelfMonitorInit();
SelfMonitorHook SelfMonitorForkChild();
// Visible for testing: 0 when `text` parses, else -1 with the reason in `error`.
int SelfMonitorParse(const char* text, char* error, size_t error_cap);

}  // namespace aiprof::sdkrt

#endif  // AIPROF_SRC_SDK_SDK_INTERNAL_H_
