// The live channel between a running process's SDK and `aiprof monitor`
// (docs/monitor.md, "The live channel"): one POSIX shared-memory segment per
// watched process, /dev/shm/aiprof-live-<pid>, created by the monitor and
// mapped by the SDK's live thread when it sees it (it looks every
// kPollIdleMs). The layout below is shared by both sides; this header
// depends on nothing but the compiler (the SDK links no libstdc++).
//
//   [Header, kHeaderBytes][Record x kCapacity]
//
// Records: a multi-producer ring of fixed 32-byte records (request end, step
// end, counter sample). A producer takes an index with one fetch_add on
// write_index and publishes the record with a sequence word (seqlock): 0
// while it writes, index + 1 once written. The ring never blocks a
// producer: when the reader falls more than kCapacity behind, the oldest
// records are overwritten and the reader counts them as lost.
//
// Control: the monitor writes a command (and a path) and bumps command_seq;
// the SDK's live thread runs it and sets ack_seq = command_seq, ack_status.
//
// Every shared field is accessed with __atomic builtins (lock-free on the
// platforms we build for), so the two processes never race in the C++ sense.
#ifndef AIPROF_SRC_SDK_LIVE_CHANNEL_H_
#define AIPROF_SRC_SDK_LIVE_CHANNEL_H_

#include <stddef.h>
#include <stdint.h>

namespace aiprof::live {

inline constexpr uint64_t kMagic = 0x4556494c46525041ull;  // "APRFLIVE" little-endian
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kCapacity = 1u << 16;  // records (2 MiB)
inline constexpr uint32_t kHeaderBytes = 8192;
inline constexpr uint32_t kCounterNames = 64;
inline constexpr uint32_t kPathBytes = 1024;
inline constexpr size_t kSegmentBytes = kHeaderBytes + static_cast<size_t>(kCapacity) * 32;
// The SDK looks for a segment this often while none is attached, and for
// commands this often while one is.
inline constexpr int kPollIdleMs = 250;
inline constexpr int kPollAttachedMs = 20;
// The SDK detaches when the monitor's heartbeat is older than this (the
// monitor died without saying so).
inline constexpr int64_t kHeartbeatStaleNs = 10'000'000'000;
// The monitor writes its heartbeat at least this often, whatever its
// --interval (it beats at each interval and from its wait between two), so
// that a live monitor's heartbeat is never near kHeartbeatStaleNs old; an
// --interval longer than that made the SDK detach and re-attach in a loop
// (trial_races B).
inline constexpr int64_t kHeartbeatEveryNs = 500'000'000;
static_assert(kHeartbeatEveryNs * 10 <= kHeartbeatStaleNs, "a live monitor's heartbeat is never stale");

enum RecordType : uint32_t { kRecRequest = 1, kRecStep = 2, kRecCounter = 3 };
enum RecordFlags : uint32_t { kFlagError = 1 };
enum Command : uint32_t {
  kCmdNone = 0,
  kCmdFlush = 1,          // write the flight recorder (ring or record buffers) to command_path
  kCmdFrameworkOn = 2,    // ask the framework layer (the Python SDK's torch profiler) to start
  kCmdFrameworkOff = 3,   // ... and to stop, writing its trace to command_path
};

struct Record {
  uint64_t seq;    // index + 1 once written; 0 while being written
  int64_t end_ns;  // CLOCK_MONOTONIC when the request / step ended, or the counter was set
  int64_t value;   // latency or duration in ns; a counter's double bits
  uint32_t type;   // RecordType
  uint32_t aux;    // request: RecordFlags; counter: index into Header::counter_names
};
static_assert(sizeof(Record) == 32, "live records are 32 bytes");

// Names longer than name[] holds are cut (to 59 bytes) and marked
// kNameCut, so that the monitor keeps two names that differ past the cut
// apart and says so.
inline constexpr uint32_t kNameWritten = 1;
// The length of the first n bytes of s less a UTF-8 character that the cut
// at n split (its lead byte and the continuation bytes before n), so that a
// cut name stays valid UTF-8 where it was. Bytes that are not UTF-8 are
// kept as they are.
inline size_t Utf8CutLength(const char* s, size_t n) {
  size_t lead = n;
  while (lead > 0 && n - lead < 3 && (static_cast<unsigned char>(s[lead - 1]) & 0xC0) == 0x80) --lead;
  if (lead == 0) return n;
  const unsigned char c = static_cast<unsigned char>(s[lead - 1]);
  const size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
  return want > 1 && n - (lead - 1) < want ? lead - 1 : n;
}

inline constexpr uint32_t kNameCut = 2;
struct CounterName {
  uint32_t used;  // 0, or kNameWritten / kNameCut once name is written
  char name[60];
};
static_assert(sizeof(CounterName) == 64, "counter names are 64 bytes");

struct Header {
  uint64_t magic;
  uint32_t version;
  uint32_t header_bytes;
  uint32_t capacity;
  uint32_t record_bytes;
  int32_t monitor_pid;
  int32_t target_pid;
  // Written by the SDK.
  uint32_t attached;  // 1 once the SDK mapped the segment
  uint32_t sdk_abi;
  int64_t attached_ns;
  uint64_t write_index;   // producers: fetch_add
  uint32_t counter_names_used;
  uint32_t framework_state;  // 0 unavailable, 1 available (idle), 2 running
  char sdk_mode[16];         // "ring" or "record"
  int64_t sdk_pid;
  char sdk_output_path[kPathBytes];  // where the SDK writes its file at exit
  // Written by the monitor.
  int64_t heartbeat_ns;  // CLOCK_MONOTONIC
  uint32_t detach;       // 1: the monitor is leaving
  // Control (monitor writes command + path, then bumps command_seq).
  uint32_t command_seq;
  uint32_t command;
  uint32_t ack_seq;
  int32_t ack_status;  // 0, or an errno value
  // Written by the SDK: the signal that is killing the process (0: none
  // seen). Its handlers record it only for signals left at their default
  // action, then let the default action happen.
  uint32_t fatal_signal;
  char command_path[kPathBytes];
  CounterName counter_names[kCounterNames];
  // Written by the SDK: counter samples not sent because their name found
  // no free slot (past the kCounterNames-th name).
  uint64_t counter_samples_dropped;
  // Written by the SDK: the FNV-1a hash (sdkrt::Fnv1a64) of each counter name in full, beside its
  // (maybe cut) text, so that an SDK attaching again to this segment finds
  // each name's own slot, a cut one's included, instead of writing the name
  // again (trial_races B). Read by no monitor; zero in a slot whose writer
  // did not set it.
  uint64_t counter_name_hashes[kCounterNames];
};
static_assert(sizeof(Header) <= kHeaderBytes, "header fits its page");
// test/monitor/monitor_e2e.py reads these from /dev/shm (case longinterval).
static_assert(offsetof(Header, attached) == 32 && offsetof(Header, attached_ns) == 40 &&
                  offsetof(Header, counter_names_used) == 56 && offsetof(Header, heartbeat_ns) == 1112,
              "monitor_e2e.py's offsets");

inline Record* Records(Header* h) {
  return reinterpret_cast<Record*>(reinterpret_cast<char*>(h) + kHeaderBytes);
}

// Appends one record (any thread, any process mapping the segment).
inline void Push(Header* h, uint32_t type, int64_t end_ns, int64_t value, uint32_t aux) {
  const uint64_t idx = __atomic_fetch_add(&h->write_index, 1, __ATOMIC_RELAXED);
  Record* r = Records(h) + (idx & (kCapacity - 1));
  __atomic_store_n(&r->seq, 0, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&r->end_ns, end_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&r->value, value, __ATOMIC_RELAXED);
  __atomic_store_n(&r->type, type, __ATOMIC_RELAXED);
  __atomic_store_n(&r->aux, aux, __ATOMIC_RELAXED);
  __atomic_store_n(&r->seq, idx + 1, __ATOMIC_RELEASE);
}

// One reader's position in the ring.
struct ReaderState {
  uint64_t next = 0;  // the next index to read
  uint64_t lost = 0;  // records overwritten before they were read
};

// Reads every record published since the last call, calling on_record(const
// Record&) for each, oldest first. A record still being written stops the
// pass (it is read next time), unless it is half a ring old (its writer
// died): then it is skipped and counted lost. Returns records read.
template <typename F>
uint64_t Drain(Header* h, ReaderState* st, F&& on_record) {
  const uint64_t w = __atomic_load_n(&h->write_index, __ATOMIC_ACQUIRE);
  if (w - st->next > kCapacity) {
    st->lost += w - st->next - kCapacity;
    st->next = w - kCapacity;
  }
  uint64_t read = 0;
  Record* ring = Records(h);
  while (st->next < w) {
    const uint64_t i = st->next;
    Record* slot = ring + (i & (kCapacity - 1));
    const uint64_t s1 = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
    Record copy;
    copy.end_ns = __atomic_load_n(&slot->end_ns, __ATOMIC_RELAXED);
    copy.value = __atomic_load_n(&slot->value, __ATOMIC_RELAXED);
    copy.type = __atomic_load_n(&slot->type, __ATOMIC_RELAXED);
    copy.aux = __atomic_load_n(&slot->aux, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    const uint64_t s2 = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED);
    if (s1 == i + 1 && s2 == i + 1) {
      copy.seq = s1;
      on_record(copy);
      ++read;
    } else if (s1 > i + 1 || s2 > i + 1) {
      ++st->lost;  // overwritten by a later lap
    } else if (w - i < kCapacity / 2) {
      break;  // still being written: read it next time
    } else {
      ++st->lost;  // its writer never finished
    }
    ++st->next;
  }
  return read;
}

}  // namespace aiprof::live

#endif  // AIPROF_SRC_SDK_LIVE_CHANNEL_H_
