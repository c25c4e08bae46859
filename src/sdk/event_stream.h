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
  // LLM serving (aiprof_request_prefill / _token / _tokens): payload the
  // request id; followed by kExtCount (prompt tokens, output tokens).
  kRequestPrefill = 14,
  kRequestTokens = 15,
  kExtCount = 16,     // payload: a count for the event before it
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

// --- The spill file: the buffers themselves, on disk ----------------------------
//
// In record mode the runtime carves its buffers out of a file beside the
// output, `<output>.part`, mapped shared (docs/sdk.md, "Surviving any exit"),
// so whatever a process recorded is in the page cache, and reaches the disk,
// however the process ends (os._exit, SIGKILL, a crash). A process that exits
// normally writes the event file above and removes its spill file; one that
// does not leaves it, and the importer reads it in its place.
//
// Layout (little-endian, all offsets multiples of the page size):
//   page 0: SpillHeader (below), rewritten as the clock is calibrated
//   then chunks, each a SpillChunk header (128 bytes) and its payload:
//     kind kSpillEvents: events (16 bytes each), zero-filled until written; a
//       thread stores an event's payload before its head, so the first
//       all-zero head ends the buffer's whole events. Chunks of one buffer
//       are numbered (seq) and, but for the last, full.
//     kind kSpillNames: name records {u64 address, u64 length, bytes padded
//       to 8}; the address is stored last (0: no record yet). Every name an
//       event points to is journaled here before the event is written.
// Event payloads hold names' addresses, resolved through the journal.
inline constexpr char kSpillMagic[8] = {'A', 'I', 'P', 'R', 'O', 'F', 'P', '\n'};
inline constexpr uint32_t kSpillVersion = 1;
inline constexpr uint32_t kSpillChunkMagic = 0x43504941;  // "AIPC"
inline constexpr uint32_t kSpillEvents = 1;
inline constexpr uint32_t kSpillNames = 2;
inline constexpr uint64_t kSpillHeaderBytes = 4096;

struct SpillHeader {
  char magic[8];
  uint32_t version;
  uint32_t bytes_per_event;
  int64_t pid;
  int32_t rank;
  uint32_t tsc;          // 1: events hold TSC ticks, 0: nanoseconds
  int64_t base_ns;
  uint64_t mult;         // ns = base_ns + (ticks * mult) >> 32; 0 until calibrated
  double ns_per_tick;
  char process_name[64];
};

// The header of each chunk of the spill file (and, in memory, of each
// record-mode chunk; `next` is a pointer in the writing process, meaningless
// in the file).
struct SpillChunk {
  uint64_t next;
  uint64_t capacity;     // events (kSpillEvents) or payload bytes (kSpillNames)
  uint32_t magic;        // kSpillChunkMagic; 0 for a chunk outside the file
  uint32_t kind;
  uint32_t buffer;       // the thread buffer's number in the process
  uint32_t seq;          // the chunk's number in its buffer
  uint64_t bytes;        // the whole chunk, this header included
  int64_t owner_tid;     // seq 0: the thread that owns the buffer now
  char owner_name[64];   // seq 0: its name
  uint64_t reserved[2];
};
static_assert(sizeof(SpillChunk) == 128, "spill chunk headers are 128 bytes");

}  // namespace aiprof::sdkrt

#endif  // AIPROF_SRC_SDK_EVENT_STREAM_H_
