// The SDK's event stream: the events it records and the file it writes them
// to. Shared, as a plain header (stdint only), by the SDK runtime
// (src/sdk/event_file.cc writes it) and the importer that turns it into the
// model through TraceBuilder (src/importers/sdk/). The SDK knows nothing of
// the model: tracks, slices, steps, requests' lanes and flows are made at
// load time, by the same builder as every other format's.
//
// The file (little-endian; docs/sdk.md, "The file"):
//   "AIPROFS\n"                                8 bytes (kEventFileMagic)
//   u32 version (kEventFileVersion), u32 bytes per event (16)
//   i64 pid, i32 rank (-1: none), u32 clock (1: TSC ticks, 0: nanoseconds)
//   i64 clock base ns, u64 clock mult (ns = base + (ticks * mult) >> 32 for
//   TSC), f64 ns per tick, f64 ring MiB (0 in record mode)
//   str process name, str mode ("record" or "ring")
//   u64 thread count, then per thread:
//     i64 tid, u64 events recorded, u64 events overwritten (ring), str name,
//     u64 event count, the events (16 bytes each, oldest first)
//   u64 string count, then the strings
//   "AIPROFSEND"                               10 bytes (kEventFileEnd)
// where str is u64 length + bytes. In the file, the payload of an event that
// names something (EventNamesString) is an index into the string table
// instead of the name's address.
#ifndef AIPROF_SRC_SDK_EVENT_STREAM_H_
#define AIPROF_SRC_SDK_EVENT_STREAM_H_

#include <stdint.h>

namespace aiprof::sdkrt {

// One recorded event: 16 bytes. `head` holds the clock reading (TSC ticks or
// nanoseconds since the runtime's base, 56-bit two's complement) << 8 | type;
// `payload` a name pointer, an id, a step number or a double's bits.
struct Event {
  uint64_t head;
  uint64_t payload;
};
static_assert(sizeof(Event) == 16, "events are 16 bytes");

enum EventType : uint8_t {
  kSpanBegin = 1,   // payload: const char* name
  kSpanEnd = 2,     // payload: 0
  kIterStart = 3,   // payload: step number
  kIterEnd = 4,     // payload: 0
  kNodeBegin = 5,   // payload: const char* node name
  kNodeEnd = 6,     // payload: 0
  kRequestBegin = 7,  // payload: request id; followed by kExtName
  kRequestEnd = 8,    // payload: request id
  kCounter = 9,       // payload: double bits; followed by kExtName
  kMark = 10,         // payload: const char* name
  kExtName = 11,      // payload: const char* name of the event before it
  // Written by a thread as it exits, so that its buffer can be handed to a
  // later thread (runtime.cc): the events before it belong to thread `tid`.
  kThreadExit = 12,   // payload: tid; followed by up to 8 kThreadName
  kThreadName = 13,   // payload: 8 bytes of the exited thread's name (NUL-padded)
};

inline constexpr int kTypeBits = 8;
inline uint8_t TypeOf(const Event& e) { return static_cast<uint8_t>(e.head & 0xff); }
inline int64_t TicksOf(const Event& e) { return static_cast<int64_t>(e.head) >> kTypeBits; }  // sign-extends

// True for the events whose payload is a name (an address in memory, a
// string index in the file).
inline bool EventNamesString(uint8_t type) {
  return type == kSpanBegin || type == kNodeBegin || type == kMark || type == kExtName;
}

inline constexpr char kEventFileMagic[8] = {'A', 'I', 'P', 'R', 'O', 'F', 'S', '\n'};
inline constexpr char kEventFileEnd[10] = {'A', 'I', 'P', 'R', 'O', 'F', 'S', 'E', 'N', 'D'};
inline constexpr uint32_t kEventFileVersion = 1;

}  // namespace aiprof::sdkrt

#endif  // AIPROF_SRC_SDK_EVENT_STREAM_H_
