#include "src/importers/sdk/sdk_event_importer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <queue>
#include <unordered_map>
#include <vector>

#include "src/base/mapped_inputs.h"
#include "src/importers/common/import_confinement.h"
#include "src/model/trace_builder.h"
#include "src/sdk/event_stream.h"

namespace aiprof {
namespace {

using sdkrt::Event;
constexpr uint32_t kNoEntry = UINT32_MAX;

// --- The file ---------------------------------------------------------------------

struct Header {
  int64_t pid = 0;
  int32_t rank = -1;
  bool tsc = false;
  int64_t base_ns = 0;
  uint64_t mult = 0;
  double ns_per_tick = 1;
  double ring_mb = 0;
  std::string_view process_name, mode;
  bool spill = false;           // read from a spill file (the process never wrote its event file)
  uint64_t unresolved_names = 0;  // spill: events whose name was not in the journal
  uint64_t cut_buffers = 0;       // spill: buffers whose chunks stop at a gap
};

struct ThreadStream {
  int64_t tid = 0;
  uint64_t recorded = 0, overwritten = 0;
  std::string_view name;
  const char* events = nullptr;  // unaligned: read with memcpy
  uint64_t count = 0;
  Event event(uint64_t i) const {
    Event e;
    std::memcpy(&e, events + i * sizeof(Event), sizeof(Event));
    return e;
  }
};

struct EventFile {
  Header header;
  std::vector<ThreadStream> threads;
  std::vector<std::string_view> strings;
  // Spill files: the events, copied with names' addresses made indices.
  std::vector<std::vector<Event>> owned_events;
  std::vector<std::string> owned_names;  // thread names (kept in a deque-like stable store)
  // The mapped file, whose pages of events are dropped once decoded.
  const char* mapped = nullptr;
  uint64_t mapped_size = 0;
};

// Drops the mapped file's pages that lie wholly inside [from, to): events
// are read once, in order, and their pages (2 events, 32 bytes, per slice)
// held half a gigabyte of RSS at the peak of a 13.5 M-slice import
// (bench/import_memory.py). A page read again is read again from the file.
void DropMappedPages(const EventFile& f, const char* from, const char* to) {
  if (f.mapped == nullptr || from < f.mapped || to > f.mapped + f.mapped_size) return;  // spill events: owned
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t a = (reinterpret_cast<uintptr_t>(from) + page - 1) & ~(page - 1);
  const uintptr_t b = reinterpret_cast<uintptr_t>(to) & ~(page - 1);
  if (b > a) ::madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);
}

// Reads the mapped file; every count is checked against the bytes left.
class Reader {
 public:
  Reader(const char* data, uint64_t size, const std::string& path) : data_(data), size_(size), path_(path) {}
  template <typename T>
  Status Value(T* v) {
    if (sizeof(T) > size_ - pos_) return Corrupt("the file ends inside a header");
    std::memcpy(v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return OkStatus();
  }
  Status Str(std::string_view* s) {
    uint64_t n = 0;
    RETURN_IF_ERROR(Value(&n));
    if (n > size_ - pos_) return Corrupt("a string runs past the end of the file");
    *s = std::string_view(data_ + pos_, n);
    pos_ += n;
    return OkStatus();
  }
  Status Events(uint64_t count, const char** events) {
    if (count > (size_ - pos_) / sizeof(Event)) return Corrupt("a thread's events run past the end of the file");
    *events = data_ + pos_;
    pos_ += count * sizeof(Event);
    return OkStatus();
  }
  Status Expect(const char* bytes, size_t n, const char* what) {
    if (n > size_ - pos_ || std::memcmp(data_ + pos_, bytes, n) != 0) return Corrupt(what);
    pos_ += n;
    return OkStatus();
  }
  Status Corrupt(const std::string& what) const {
    return ErrStatus(path_ + ": corrupt SDK event file at byte " + std::to_string(pos_) + ": " + what);
  }

 private:
  const char* data_;
  uint64_t size_;
  const std::string& path_;
  uint64_t pos_ = 0;
};

Status ReadHeader(Reader& r, const std::string& path, Header* h) {
  RETURN_IF_ERROR(r.Expect(sdkrt::kEventFileMagic, sizeof(sdkrt::kEventFileMagic), "not an SDK event file"));
  uint32_t version = 0, event_bytes = 0, tsc = 0;
  RETURN_IF_ERROR(r.Value(&version));
  if (version != sdkrt::kEventFileVersion) {
    return ErrStatus(path + ": SDK event file version " + std::to_string(version) +
                     " is not supported (this build reads " + std::to_string(sdkrt::kEventFileVersion) + ")");
  }
  RETURN_IF_ERROR(r.Value(&event_bytes));
  if (event_bytes != sizeof(Event)) return r.Corrupt("events of " + std::to_string(event_bytes) + " bytes, not 16");
  RETURN_IF_ERROR(r.Value(&h->pid));
  RETURN_IF_ERROR(r.Value(&h->rank));
  RETURN_IF_ERROR(r.Value(&tsc));
  h->tsc = tsc != 0;
  RETURN_IF_ERROR(r.Value(&h->base_ns));
  RETURN_IF_ERROR(r.Value(&h->mult));
  RETURN_IF_ERROR(r.Value(&h->ns_per_tick));
  RETURN_IF_ERROR(r.Value(&h->ring_mb));
  RETURN_IF_ERROR(r.Str(&h->process_name));
  return r.Str(&h->mode);
}

Status ReadEventFile(const char* data, uint64_t size, const std::string& path, EventFile* f) {
  Reader r(data, size, path);
  RETURN_IF_ERROR(ReadHeader(r, path, &f->header));
  uint64_t threads = 0;
  RETURN_IF_ERROR(r.Value(&threads));
  for (uint64_t t = 0; t < threads; ++t) {
    ThreadStream s;
    RETURN_IF_ERROR(r.Value(&s.tid));
    RETURN_IF_ERROR(r.Value(&s.recorded));
    RETURN_IF_ERROR(r.Value(&s.overwritten));
    RETURN_IF_ERROR(r.Str(&s.name));
    RETURN_IF_ERROR(r.Value(&s.count));
    RETURN_IF_ERROR(r.Events(s.count, &s.events));
    f->threads.push_back(s);
  }
  uint64_t strings = 0;
  RETURN_IF_ERROR(r.Value(&strings));
  if (strings > UINT32_MAX) return r.Corrupt("more strings than ids");
  for (uint64_t i = 0; i < strings; ++i) {
    std::string_view s;
    RETURN_IF_ERROR(r.Str(&s));
    f->strings.push_back(s);
  }
  return r.Expect(sdkrt::kEventFileEnd, sizeof(sdkrt::kEventFileEnd), "missing end marker (truncated?)");
}

// --- The spill file (event_stream.h): a process's buffers, left on disk ------------

// Reads what a process that never wrote its event file (os._exit, SIGKILL, a
// crash) left in its spill mapping: each buffer's chunks in order, up to its
// last whole event (the first zero head); names through the journal; one
// stream per thread, cut at the exit markers as the runtime's writer cuts
// them (runtime.cc, SnapshotBuffer).
Status ReadSpillFile(const char* data, uint64_t size, const std::string& path, EventFile* f) {
  auto corrupt = [&](const std::string& what) { return ErrStatus(path + ": corrupt SDK spill file: " + what); };
  sdkrt::SpillHeader h;
  if (size < sdkrt::kSpillHeaderBytes) return corrupt("shorter than its header page");
  std::memcpy(&h, data, sizeof(h));
  if (h.version != sdkrt::kSpillVersion) {
    return ErrStatus(path + ": SDK spill file version " + std::to_string(h.version) + " is not supported (this build reads " +
                     std::to_string(sdkrt::kSpillVersion) + ")");
  }
  if (h.bytes_per_event != sizeof(Event)) return corrupt("events of " + std::to_string(h.bytes_per_event) + " bytes, not 16");
  if (h.mult == 0) return corrupt("the process ended before its clock was calibrated");
  Header& out = f->header;
  out.pid = h.pid;
  out.rank = h.rank;
  out.tsc = h.tsc != 0;
  out.base_ns = h.base_ns;
  out.mult = h.mult;
  out.ns_per_tick = h.ns_per_tick;
  f->owned_names.reserve(1);
  f->owned_names.push_back(std::string(h.process_name, strnlen(h.process_name, sizeof(h.process_name))));
  out.mode = "record";
  out.spill = true;

  constexpr uint64_t kStep = 64 << 10;  // chunks are multiples of 64 KiB
  struct ChunkRef {
    uint64_t offset;
    sdkrt::SpillChunk hdr;
  };
  std::vector<ChunkRef> events, names;
  for (uint64_t off = sdkrt::kSpillHeaderBytes; off + sizeof(sdkrt::SpillChunk) <= size;) {
    sdkrt::SpillChunk c;
    std::memcpy(&c, data + off, sizeof(c));
    if (c.magic != sdkrt::kSpillChunkMagic || c.bytes < kStep || c.bytes % kStep != 0) {
      off += kStep;  // a region handed out but never initialised
      continue;
    }
    const uint64_t avail = std::min<uint64_t>(c.bytes, size - off) - sizeof(c);
    if (c.kind == sdkrt::kSpillEvents) {
      c.capacity = std::min<uint64_t>(c.capacity, avail / sizeof(Event));
      events.push_back(ChunkRef{off, c});
    } else if (c.kind == sdkrt::kSpillNames) {
      c.capacity = std::min<uint64_t>(c.capacity, avail);
      names.push_back(ChunkRef{off, c});
    }
    off += std::min<uint64_t>(c.bytes, size - off);  // a hostile size cannot wrap the walk
  }
  // Names: address -> string index.
  std::unordered_map<uint64_t, uint32_t> by_address;
  for (const ChunkRef& c : names) {
    const char* base = data + c.offset + sizeof(sdkrt::SpillChunk);
    for (uint64_t pos = 0; pos + 16 <= c.hdr.capacity;) {
      uint64_t address = 0, len = 0;
      std::memcpy(&address, base + pos, 8);
      std::memcpy(&len, base + pos + 8, 8);
      if (address == 0 || len > c.hdr.capacity - pos - 16) break;
      by_address.try_emplace(address, static_cast<uint32_t>(f->strings.size()));
      f->strings.emplace_back(base + pos + 16, len);
      pos += 16 + ((len + 7) & ~7ull);
    }
  }
  uint32_t unknown = kNoEntry;
  auto name_index = [&](uint64_t address) {
    auto it = by_address.find(address);
    if (it != by_address.end()) return it->second;
    ++out.unresolved_names;
    if (unknown == kNoEntry) {
      unknown = static_cast<uint32_t>(f->strings.size());
      f->strings.push_back("<name not journaled>");
    }
    return unknown;
  };
  // Events, per buffer in chunk order.
  std::stable_sort(events.begin(), events.end(), [](const ChunkRef& a, const ChunkRef& b) {
    return a.hdr.buffer != b.hdr.buffer ? a.hdr.buffer < b.hdr.buffer : a.hdr.seq < b.hdr.seq;
  });
  struct Segment {
    int64_t tid;
    std::string name;
    std::vector<Event> events;
  };
  std::vector<Segment> segments;
  for (size_t i = 0; i < events.size();) {
    const uint32_t buffer = events[i].hdr.buffer;
    size_t j = i;
    while (j < events.size() && events[j].hdr.buffer == buffer) ++j;
    const sdkrt::SpillChunk& first = events[i].hdr;
    std::vector<Event> all;
    bool ended = false;
    for (size_t k = i; k < j && !ended; ++k) {
      if (events[k].hdr.seq != k - i) {  // a chunk outside the file (disk full): the rest is not here
        ++out.cut_buffers;
        break;
      }
      const char* ev = data + events[k].offset + sizeof(sdkrt::SpillChunk);
      for (uint64_t n = 0; n < events[k].hdr.capacity; ++n) {
        Event e;
        std::memcpy(&e, ev + n * sizeof(Event), sizeof(e));
        if (e.head == 0) {
          ended = true;
          break;
        }
        all.push_back(e);
      }
    }
    const size_t views_before = segments.size();
    Segment cur{0, {}, {}};
    bool segment_empty = true;
    for (size_t k = 0; k < all.size(); ++k) {
      Event e = all[k];
      const uint8_t type = sdkrt::TypeOf(e);
      if (type == sdkrt::kThreadName) {
        continue;  // read with its kThreadExit
      }
      if (type == sdkrt::kThreadExit) {
        cur.tid = static_cast<int64_t>(e.payload);
        char name[8 * 8 + 1] = {};
        for (int m = 0; m < 8 && k + 1 < all.size() && sdkrt::TypeOf(all[k + 1]) == sdkrt::kThreadName; ++m) {
          std::memcpy(name + m * 8, &all[++k].payload, 8);
        }
        cur.name = name;
        segments.push_back(std::move(cur));
        cur = Segment{0, {}, {}};
        segment_empty = true;
        continue;
      }
      if (sdkrt::EventNamesString(type)) e.payload = name_index(e.payload);
      cur.events.push_back(e);
      segment_empty = false;
    }
    if (!segment_empty || segments.size() == views_before) {
      cur.tid = first.owner_tid;
      cur.name.assign(first.owner_name, strnlen(first.owner_name, sizeof(first.owner_name)));
      segments.push_back(std::move(cur));
    }
    i = j;
  }
  f->owned_events.reserve(segments.size());
  f->owned_names.reserve(1 + segments.size());
  for (Segment& s : segments) {
    f->owned_events.push_back(std::move(s.events));
    f->owned_names.push_back(std::move(s.name));
  }
  out.process_name = f->owned_names[0];
  for (size_t t = 0; t < segments.size(); ++t) {
    ThreadStream ts;
    ts.tid = segments[t].tid;
    ts.name = f->owned_names[t + 1];
    ts.events = reinterpret_cast<const char*>(f->owned_events[t].data());
    ts.count = f->owned_events[t].size();
    ts.recorded = ts.count;
    f->threads.push_back(ts);
  }
  return OkStatus();
}

// --- Decoded records -----------------------------------------------------------

struct SliceRec {
  int64_t ts_ns;
  int64_t dur_ns;  // -1 while open
  StringId name;
};

// One thread's slices in begin order, in blocks: AddSlices frees each block
// once its slices are in the builder, so the records and the slice table
// they become never both hold every slice (a vector of them added 24 bytes
// per slice to the import's peak). A block grows as a vector up to kBlock
// records: a whole block allocated at a thread's first slice (1.5 MiB, its
// records constructed) cost a file of 10,000 short-lived threads 15 GB of
// page touching (SdkFile.ThreadChurnRecordModeMemoryBounded: 13 s -> 170 s).
class SliceRecs {
 public:
  static constexpr size_t kShift = 16;
  static constexpr size_t kBlock = size_t{1} << kShift;
  size_t size() const { return size_; }
  SliceRec& operator[](size_t i) { return blocks_[i >> kShift][i & (kBlock - 1)]; }
  void push_back(const SliceRec& r) {
    if ((size_ & (kBlock - 1)) == 0) blocks_.emplace_back();
    blocks_.back().push_back(r);
    ++size_;
  }
  // Frees the block that holds record i: none of its records is read again.
  void ReleaseBlockOf(size_t i) { std::vector<SliceRec>().swap(blocks_[i >> kShift]); }

 private:
  std::vector<std::vector<SliceRec>> blocks_;
  size_t size_ = 0;
};

struct OpenEntry {
  uint32_t slice;  // index in the thread's slices (begin order)
  uint8_t cls;     // 0 span, 1 node, 2 iteration
};

// A request's begin or end: where it happened and the span open there.
struct RequestSide {
  uint64_t id;
  int64_t ts_ns;
  uint32_t thread, anchor;  // anchor: begin-order slice index or kNone
  StringId name;            // begins only
};

struct RequestRec {
  int64_t ts_ns, dur_ns;
  uint64_t id;
  StringId name;
  RequestSide begin, end;
  uint32_t lane;
};

struct CounterRec {
  uint32_t counter, seq;
  int64_t ts_ns;
  double value;
};

// aiprof_request_prefill / _token / _tokens.
struct TokenRec {
  uint64_t id;
  int64_t ts_ns;
  uint64_t count;  // prompt tokens (prefill) or output tokens
  bool prefill;
};

struct InstantRec {
  int64_t ts_ns;
  StringId name;
  uint32_t thread;
};

struct Counts {
  uint64_t unmatched_end = 0, unclosed = 0, open_at_write = 0, ring_partial = 0, orphan_names = 0;
  uint64_t request_unmatched_end = 0, requests_in_flight = 0, request_duplicate_end = 0;
  uint64_t tokens_unmatched = 0;  // token events of no finished request
  uint64_t counter_not_finite = 0;  // counter samples of NaN or an infinity (skipped)
};

// Turns the file's events into builder calls.
class SdkDecoder {
 public:
  SdkDecoder(EventFile& file, TraceBuilder* builder, const std::string& path)
      : f_(file),
        b_(builder),
        path_(path),
        string_ids_(file.strings.size(), StringId{kNoEntry}),
        node_ids_(file.strings.size(), StringId{kNoEntry}),
        slices_(file.threads.size()) {}

  Status Run() {
    for (uint32_t t = 0; t < f_.threads.size(); ++t) RETURN_IF_ERROR(DecodeThread(t));
    MatchRequests();
    MakeTracks();
    AddSlices();
    AddRequests();
    AddInstantsAndCounters();
    AddMetadata();
    AddDiagnostics();
    return OkStatus();
  }

 private:
  int64_t ToNs(int64_t ticks) const {
    const Header& h = f_.header;
    if (!h.tsc) return static_cast<int64_t>(static_cast<uint64_t>(h.base_ns) + static_cast<uint64_t>(ticks));
    unsigned __int128 mag =
        static_cast<unsigned __int128>(ticks < 0 ? -static_cast<uint64_t>(ticks) : static_cast<uint64_t>(ticks)) * h.mult;
    uint64_t ns = static_cast<uint64_t>(mag >> 32);
    // Wraps (no overflow) on a hostile file: TraceBuilder refuses times out of range.
    return static_cast<int64_t>(static_cast<uint64_t>(h.base_ns) + (ticks < 0 ? -ns : ns));
  }

  // The name at string `index` (interned on first use); false when the
  // index is past the table (BadName() says so).
  bool Name(uint64_t index, StringId* out) {
    if (index >= string_ids_.size()) return false;
    StringId& id = string_ids_[index];
    if (id.raw == kNoEntry) id = b_->Intern(f_.strings[index]);
    *out = id;
    return true;
  }
  bool NodeName(uint64_t index, StringId* out) {
    if (index >= node_ids_.size()) return false;
    StringId& id = node_ids_[index];
    if (id.raw == kNoEntry) id = b_->Intern("node:" + std::string(f_.strings[index]));
    *out = id;
    return true;
  }
  Status BadName(uint32_t thread, uint64_t index) const {
    return ErrStatus(path_ + ": corrupt SDK event file: thread " + std::to_string(thread) + " names string " +
                     std::to_string(index) + " of " + std::to_string(f_.strings.size()));
  }

  // Closes the innermost open entry of class `cls` at `ts`; entries above it
  // close with it (their end was never recorded).
  void Close(std::vector<OpenEntry>* stack, SliceRecs* slices, uint8_t cls, int64_t ts, bool ring_loss) {
    size_t i = stack->size();
    while (i > 0 && (*stack)[i - 1].cls != cls) --i;
    if (i == 0) {
      ++(ring_loss ? counts_.ring_partial : counts_.unmatched_end);
      return;
    }
    while (stack->size() >= i) {
      SliceRec& s = (*slices)[stack->back().slice];
      s.dur_ns = ts > s.ts_ns ? static_cast<int64_t>(static_cast<uint64_t>(ts) - static_cast<uint64_t>(s.ts_ns)) : 0;
      if (stack->size() > i) ++counts_.unclosed;
      stack->pop_back();
    }
  }

  Status NamedEvent(uint32_t thread, const Event& pending, const Event& name_event, const std::vector<OpenEntry>& stack) {
    StringId name;
    if (!Name(name_event.payload, &name)) return BadName(thread, name_event.payload);
    int64_t ts = ToNs(sdkrt::TicksOf(pending));
    if (sdkrt::TypeOf(pending) == sdkrt::kRequestBegin) {
      uint32_t anchor = stack.empty() ? kNoEntry : stack.back().slice;
      req_begins_.push_back(RequestSide{pending.payload, ts, thread, anchor, name});
      return OkStatus();
    }
    double value;
    std::memcpy(&value, &pending.payload, sizeof(value));
    if (!std::isfinite(value)) {
      // aiprof_counter(name, NAN) was kept as a sample (NULL in query,
      // Infinity in the totals; input trial, 'in'): counted, skipped.
      ++counts_.counter_not_finite;
      return OkStatus();
    }
    auto [it, added] = counter_index_.try_emplace(name.raw, static_cast<uint32_t>(counter_names_.size()));
    if (added) counter_names_.push_back(name);
    counters_.push_back(CounterRec{it->second, static_cast<uint32_t>(counters_.size()), ts, value});
    return OkStatus();
  }

  Status DecodeThread(uint32_t thread) {
    const ThreadStream& view = f_.threads[thread];
    SliceRecs& slices = slices_[thread];
    std::vector<OpenEntry> stack;
    const bool ring_loss = view.overwritten > 0;
    ring_loss_ = ring_loss_ || ring_loss;
    bool has_pending = false;  // an event waiting for its kExtName
    Event pending{};
    constexpr uint64_t kDropEvents = 1 << 20;  // 16 MiB of the file at a time
    for (uint64_t k = 0; k < view.count; ++k) {
      if (k % kDropEvents == 0 && k > 0) {
        DropMappedPages(f_, view.events + (k - kDropEvents) * sizeof(Event), view.events + k * sizeof(Event));
      }
      const Event e = view.event(k);
      const uint8_t type = sdkrt::TypeOf(e);
      if (type == sdkrt::kExtCount) {
        if (has_pending && (sdkrt::TypeOf(pending) == sdkrt::kRequestPrefill ||
                            sdkrt::TypeOf(pending) == sdkrt::kRequestTokens)) {
          tokens_.push_back(TokenRec{pending.payload, ToNs(sdkrt::TicksOf(pending)), e.payload,
                                     sdkrt::TypeOf(pending) == sdkrt::kRequestPrefill});
        }
        has_pending = false;
        continue;
      }
      if (type == sdkrt::kExtName) {
        if (!has_pending) {
          ++counts_.orphan_names;  // its event was overwritten in the ring
          continue;
        }
        RETURN_IF_ERROR(NamedEvent(thread, pending, e, stack));
        has_pending = false;
        continue;
      }
      has_pending = false;  // pairs commit together: a lone event lost its name
      int64_t ts = ToNs(sdkrt::TicksOf(e));
      switch (type) {
        case sdkrt::kSpanBegin:
        case sdkrt::kNodeBegin:
        case sdkrt::kIterStart: {
          StringId name;
          uint8_t cls;
          if (type == sdkrt::kSpanBegin) {
            if (!Name(e.payload, &name)) return BadName(thread, e.payload);
            cls = 0;
          } else if (type == sdkrt::kNodeBegin) {
            if (!NodeName(e.payload, &name)) return BadName(thread, e.payload);
            cls = 1;
          } else {
            char text[40];
            std::snprintf(text, sizeof(text), "ProfilerStep#%llu", static_cast<unsigned long long>(e.payload));
            name = b_->Intern(text);
            cls = 2;
          }
          stack.push_back(OpenEntry{static_cast<uint32_t>(slices.size()), cls});
          slices.push_back(SliceRec{ts, -1, name});
          break;
        }
        case sdkrt::kSpanEnd: Close(&stack, &slices, 0, ts, ring_loss); break;
        case sdkrt::kNodeEnd: Close(&stack, &slices, 1, ts, ring_loss); break;
        case sdkrt::kIterEnd: Close(&stack, &slices, 2, ts, ring_loss); break;
        case sdkrt::kRequestBegin:
        case sdkrt::kCounter:
        case sdkrt::kRequestPrefill:
        case sdkrt::kRequestTokens:
          pending = e;
          has_pending = true;
          break;
        case sdkrt::kRequestEnd: {
          uint32_t anchor = stack.empty() ? kNoEntry : stack.back().slice;
          req_ends_.push_back(RequestSide{e.payload, ts, thread, anchor, StringId{}});
          break;
        }
        case sdkrt::kMark: {
          StringId name;
          if (!Name(e.payload, &name)) return BadName(thread, e.payload);
          instants_.push_back(InstantRec{ts, name, thread});
          break;
        }
        default: break;
      }
    }
    counts_.open_at_write += stack.size();
    if (view.count > 0) {
      const uint64_t tail = (view.count - 1) / kDropEvents * kDropEvents;
      DropMappedPages(f_, view.events + tail * sizeof(Event), view.events + view.count * sizeof(Event));
    }
    if (thread < f_.owned_events.size()) std::vector<Event>().swap(f_.owned_events[thread]);  // spill: read once
    return OkStatus();
  }

  // Pairs request begins and ends by id; assigns lanes (the lane that has
  // been free longest) so requests on one lane never overlap.
  void MatchRequests() {
    auto by_id = [](const RequestSide& a, const RequestSide& b) { return a.id != b.id ? a.id < b.id : a.ts_ns < b.ts_ns; };
    std::sort(req_begins_.begin(), req_begins_.end(), by_id);
    std::sort(req_ends_.begin(), req_ends_.end(), by_id);
    size_t b = 0, e = 0;
    while (b < req_begins_.size() || e < req_ends_.size()) {
      if (e == req_ends_.size() || (b < req_begins_.size() && req_begins_[b].id < req_ends_[e].id)) {
        ++counts_.requests_in_flight, ++b;
        continue;
      }
      if (b == req_begins_.size() || req_ends_[e].id < req_begins_[b].id) {
        ++(ring_loss_ ? counts_.ring_partial : counts_.request_unmatched_end), ++e;
        continue;
      }
      const RequestSide& rb = req_begins_[b];
      const RequestSide& re = req_ends_[e];
      int64_t dur = re.ts_ns > rb.ts_ns ? static_cast<int64_t>(static_cast<uint64_t>(re.ts_ns) - static_cast<uint64_t>(rb.ts_ns)) : 0;
      requests_.push_back(RequestRec{rb.ts_ns, dur, rb.id, rb.name, rb, re, 0});
      ++b, ++e;
      while (e < req_ends_.size() && req_ends_[e].id == rb.id) ++counts_.request_duplicate_end, ++e;
    }
    std::sort(requests_.begin(), requests_.end(), [](const RequestRec& x, const RequestRec& y) {
      if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
      if (x.dur_ns != y.dur_ns) return x.dur_ns > y.dur_ns;
      return x.id < y.id;
    });
    // Min-heap of (lane end, lane).
    using Lane = std::pair<int64_t, uint32_t>;
    std::priority_queue<Lane, std::vector<Lane>, std::greater<Lane>> free_at;
    for (RequestRec& r : requests_) {
      if (!free_at.empty() && free_at.top().first <= r.ts_ns) {
        r.lane = free_at.top().second;
        free_at.pop();
      } else {
        r.lane = lanes_++;
      }
      free_at.push(Lane{static_cast<int64_t>(static_cast<uint64_t>(r.ts_ns) + static_cast<uint64_t>(r.dur_ns)), r.lane});
    }
    // Slices sort by track: requests by (lane, start, longest first).
    std::sort(requests_.begin(), requests_.end(), [](const RequestRec& x, const RequestRec& y) {
      if (x.lane != y.lane) return x.lane < y.lane;
      if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
      return x.dur_ns != y.dur_ns ? x.dur_ns > y.dur_ns : x.id < y.id;
    });
  }

  // Threads, then request lanes, then counters, every one of the process.
  void MakeTracks() {
    const IdValue pid = IdValue::Num(f_.header.pid);
    for (const ThreadStream& t : f_.threads) {
      uint32_t track = b_->NewThreadTrack(pid, IdValue::Num(t.tid));
      b_->SetThreadName(track, b_->Intern(t.name));
      b_->SetTrackRole(track, TrackKind::kThread, Layer::kApplication, kHostDevice);
      thread_tracks_.push_back(track);
    }
    for (uint32_t i = 0; i < lanes_; ++i) {
      StringId name = b_->Intern(i == 0 ? std::string("requests") : "requests " + std::to_string(i + 1));
      uint32_t track = b_->ThreadTrack(pid, IdValue::Str(name));
      b_->SetThreadName(track, name);
      b_->SetTrackRole(track, TrackKind::kSpans, Layer::kApplication, kHostDevice);
      lane_tracks_.push_back(track);
    }
    for (StringId name : counter_names_) {
      uint32_t track = b_->CounterTrack(pid, name, kHostDevice);
      b_->SetTrackRole(track, TrackKind::kCounter, Layer::kApplication, kHostDevice);
      counter_tracks_.push_back(track);
    }
    b_->SetProcessName(pid, b_->Intern(f_.header.process_name));
    b_->SetDefaultRank(f_.header.rank >= 0 ? f_.header.rank : kNoRank);
  }

  // Closed slices in begin order (Finalize sorts them; ties keep this
  // order), each block of records freed once added; anchors_ gets the
  // builder's index of the slices that requests are anchored to.
  void AddSlices() {
    category_ = b_->Intern("user_annotation");
    CollectAnchors();
    for (uint32_t t = 0; t < slices_.size(); ++t) {
      SliceRecs& recs = slices_[t];
      std::vector<std::pair<uint32_t, uint32_t>>& anchors = anchors_[t];
      size_t next_anchor = 0;
      for (size_t i = 0; i < recs.size(); ++i) {
        const SliceRec s = recs[i];
        if (i + 1 == recs.size() || ((i + 1) & (SliceRecs::kBlock - 1)) == 0) recs.ReleaseBlockOf(i);
        // A slice still open when the file was written is left out.
        const uint32_t index =
            s.dur_ns < 0 ? kNoSlice
                         : b_->AddSlice(thread_tracks_[t], s.ts_ns, s.dur_ns, s.name, category_, kNoCorrelation, 0, 0);
        if (next_anchor < anchors.size() && anchors[next_anchor].first == i) anchors[next_anchor++].second = index;
      }
      recs = SliceRecs();
    }
  }

  // The (begin-order index, kNoSlice) of every slice a matched request is
  // anchored to, per thread, sorted and distinct.
  void CollectAnchors() {
    anchors_.assign(slices_.size(), {});
    for (const RequestRec& r : requests_) {
      for (const RequestSide* side : {&r.begin, &r.end}) {
        if (side->anchor != kNoEntry) anchors_[side->thread].emplace_back(side->anchor, kNoSlice);
      }
    }
    for (auto& a : anchors_) {
      std::sort(a.begin(), a.end());
      a.erase(std::unique(a.begin(), a.end()), a.end());
    }
  }

  uint32_t AnchorSlice(const RequestSide& side) const {
    if (side.anchor == kNoEntry) return kNoSlice;
    const auto& a = anchors_[side.thread];
    auto it = std::lower_bound(a.begin(), a.end(), std::make_pair(side.anchor, uint32_t{0}));
    return it != a.end() && it->first == side.anchor ? it->second : kNoSlice;
  }

  // A request's token figures (docs/sdk.md, "LLM serving"): on its slice as
  // args, and each token event as an instant "token" (category "token", args
  // id and n) on the request's lane.
  void AddRequests() {
    StringId flow_category = b_->Intern("request");
    std::sort(tokens_.begin(), tokens_.end(), [](const TokenRec& a, const TokenRec& b) {
      return a.id != b.id ? a.id < b.id : a.ts_ns < b.ts_ns;
    });
    auto arg_uint = [&](const char* key, uint64_t v) {
      Arg a{};
      a.key = b_->Intern(key);
      a.type = ArgType::kUint;
      a.u = v;
      b_->AddArg(a);
    };
    auto arg_int = [&](const char* key, int64_t v) {
      Arg a{};
      a.key = b_->Intern(key);
      a.type = ArgType::kInt;
      a.i = v;
      b_->AddArg(a);
    };
    auto arg_double = [&](const char* key, double v) {
      Arg a{};
      a.key = b_->Intern(key);
      a.type = ArgType::kDouble;
      a.d = v;
      b_->AddArg(a);
    };
    const StringId token_name = b_->Intern("token"), n_key = b_->Intern("n");
    uint64_t matched_tokens = 0;
    for (const RequestRec& r : requests_) {
      auto first = std::lower_bound(tokens_.begin(), tokens_.end(), r.id,
                                    [](const TokenRec& t, uint64_t id) { return t.id < id; });
      auto last = first;
      while (last != tokens_.end() && last->id == r.id) ++last;
      matched_tokens += static_cast<uint64_t>(last - first);
      uint64_t arg_begin = b_->ArgCursor();
      arg_uint("id", r.id);
      uint16_t args = 1;
      // Output tokens in time order; the prefill's start and prompt size.
      int64_t prefill_ts = 0, first_ts = 0, last_ts = 0;
      uint64_t prompt = 0, output = 0, first_n = 0;
      bool has_prefill = false;
      for (auto t = first; t != last; ++t) {
        if (t->prefill) {
          if (!has_prefill) prefill_ts = t->ts_ns, has_prefill = true;
          prompt += t->count;
          continue;
        }
        if (output == 0) first_ts = t->ts_ns, first_n = t->count;
        last_ts = t->ts_ns;
        output += t->count;
      }
      if (has_prefill) {
        arg_uint("prompt_tokens", prompt);
        arg_int("queue_ns", prefill_ts - r.ts_ns);
        args += 2;
      }
      if (output > 0) {
        arg_uint("output_tokens", output);
        arg_int("ttft_ns", first_ts - r.ts_ns);
        arg_double("tokens_per_s", r.dur_ns > 0 ? static_cast<double>(output) * 1e9 / static_cast<double>(r.dur_ns) : 0.0);
        args += 3;
        if (output > first_n) {
          arg_double("tpot_ns", static_cast<double>(last_ts - first_ts) / static_cast<double>(output - first_n));
          ++args;
        }
      }
      uint32_t self = b_->AddSlice(lane_tracks_[r.lane], r.ts_ns, r.dur_ns, r.name, category_, kNoCorrelation, arg_begin, args);
      for (auto t = first; t != last; ++t) {
        if (t->prefill) continue;
        uint64_t token_args = b_->ArgCursor();
        arg_uint("id", r.id);
        Arg n{};
        n.key = n_key;
        n.type = ArgType::kUint;
        n.u = t->count;
        b_->AddArg(n);
        b_->AddInstant(lane_tracks_[r.lane], t->ts_ns, token_name, token_name, 't', token_args, 2);
      }
      uint32_t from = AnchorSlice(r.begin), to = AnchorSlice(r.end);
      if (from == kNoSlice) from = self;
      if (to == kNoSlice) to = self;
      if (from != to) b_->AddSliceFlow(from, to, r.id, flow_category);
    }
    counts_.tokens_unmatched = tokens_.size() - matched_tokens;
  }

  void AddInstantsAndCounters() {
    StringId mark = b_->Intern("mark");
    for (const InstantRec& x : instants_) b_->AddInstant(thread_tracks_[x.thread], x.ts_ns, x.name, mark, 't', 0, 0);
    std::sort(counters_.begin(), counters_.end(), [](const CounterRec& a, const CounterRec& b) {
      if (a.counter != b.counter) return a.counter < b.counter;
      return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.seq < b.seq;
    });
    for (const CounterRec& c : counters_) b_->AddCounter(counter_tracks_[c.counter], c.ts_ns, c.value);
  }

  void AddMetadata() {
    const Header& h = f_.header;
    uint64_t recorded = 0, held = 0, overwritten = 0;
    for (const ThreadStream& t : f_.threads) recorded += t.recorded, held += t.count, overwritten += t.overwritten;
    char text[64];
    auto& meta = b_->trace()->metadata;
    meta["source_format"] = "aiprof_sdk";
    meta["clock_domain"] = "CLOCK_MONOTONIC";
    meta["process_name"] = std::string(h.process_name);
    meta["pid"] = std::to_string(static_cast<uint64_t>(h.pid));
    if (h.rank >= 0) meta["rank"] = std::to_string(h.rank);
    meta["sdk.abi_version"] = "1";
    meta["sdk.mode"] = std::string(h.mode);
    std::snprintf(text, sizeof(text), "%g", h.ring_mb);
    meta["sdk.ring_mb"] = text;
    meta["sdk.clock"] = h.tsc ? "tsc" : "monotonic";
    // CLOCK_MONOTONIC at the runtime's start; a forked child inherits it
    // (one run's processes: src/importers/sdk/sdk_processes.h).
    meta["sdk.clock_base_ns"] = std::to_string(h.base_ns);
    std::snprintf(text, sizeof(text), "%.9f", h.ns_per_tick);
    meta["sdk.ns_per_tick"] = text;
    meta["sdk.bytes_per_event"] = std::to_string(sizeof(Event));
    meta["sdk.threads"] = std::to_string(f_.threads.size());
    meta["sdk.events_recorded"] = std::to_string(recorded);
    meta["sdk.events_written"] = std::to_string(held);
    meta["sdk.events_overwritten"] = std::to_string(overwritten);
    meta["sdk.open_spans"] = std::to_string(counts_.open_at_write);
    meta["sdk.requests_in_flight"] = std::to_string(counts_.requests_in_flight);
    if (!tokens_.empty()) meta["sdk.token_events_unmatched"] = std::to_string(counts_.tokens_unmatched);
    meta["sdk.ring_partial"] = std::to_string(counts_.ring_partial + counts_.orphan_names);
    if (h.spill) {
      meta["sdk.source"] = "spill";
      meta["sdk.names_unresolved"] = std::to_string(h.unresolved_names);
    }
  }

  // Misuse the SDK's calls allowed, repaired or dropped here.
  void AddDiagnostics() {
    const Counts& c = counts_;
    struct {
      const char* kind;
      uint64_t count;
      const char* what;
    } diags[] = {
        {"sdk_unmatched_end", c.unmatched_end,
         "an aiprof_*_end() call had no open begin of its kind on its thread; it was ignored"},
        {"sdk_unclosed_span", c.unclosed,
         "a span was still open when an enclosing span or step ended; it was closed there"},
        {"sdk_request_unmatched_end", c.request_unmatched_end,
         "aiprof_request_end() was given an id that no aiprof_request_begin() returned; it was ignored"},
        {"sdk_request_duplicate_end", c.request_duplicate_end,
         "aiprof_request_end() was called more than once for one id; the first end counts"},
        {"sdk_counter_not_finite", c.counter_not_finite,
         "aiprof_counter() was given NaN or an infinity; that sample was skipped"},
    };
    const Header& h = f_.header;
    if (h.spill) {
      DiagnosticEntry& d = b_->trace()->diagnostics.mutable_entries()["sdk_stream_unterminated"];
      if (d.count == 0) {
        d.first_where = path_;
        d.description =
            "the process did not write its SDK file (it ended by os._exit, a signal or a crash, or the file's write "
            "failed, e.g. on a full disk: its stderr says which): its events were read from its spill file up to "
            "the last whole event";
      }
      ++d.count;
    }
    if (h.cut_buffers > 0 || h.unresolved_names > 0) {
      DiagnosticEntry& d = b_->trace()->diagnostics.mutable_entries()["sdk_spill_incomplete"];
      if (d.count == 0) {
        d.first_where = path_;
        d.description =
            "part of the spill file was never written (a chunk kept in memory when the disk was full, or a name "
            "the process did not journal): the events after it are left out or unnamed";
      }
      d.count += h.cut_buffers + h.unresolved_names;
    }
    for (const auto& x : diags) {
      if (x.count == 0) continue;
      DiagnosticEntry& d = b_->trace()->diagnostics.mutable_entries()[x.kind];
      if (d.count == 0) d.first_where = "aiprof SDK", d.description = x.what;
      d.count += x.count;
    }
  }

  EventFile& f_;
  TraceBuilder* b_;
  const std::string& path_;
  std::vector<StringId> string_ids_, node_ids_;  // by file string index; raw kNone until interned
  std::vector<SliceRecs> slices_;                // per thread, begin order
  // Per thread: (begin-order index, builder index) of the slices requests
  // are anchored to (CollectAnchors, AddSlices).
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> anchors_;
  std::vector<RequestSide> req_begins_, req_ends_;
  std::vector<RequestRec> requests_;
  std::vector<StringId> counter_names_;
  std::unordered_map<uint32_t, uint32_t> counter_index_;  // name id -> counter
  std::vector<CounterRec> counters_;
  std::vector<InstantRec> instants_;
  std::vector<TokenRec> tokens_;
  std::vector<uint32_t> thread_tracks_, lane_tracks_, counter_tracks_;
  StringId category_;
  Counts counts_;
  uint32_t lanes_ = 0;
  bool ring_loss_ = false;
};

}  // namespace

bool DetectSdkEventFile(std::string_view prefix) {
  return prefix.substr(0, sizeof(sdkrt::kEventFileMagic)) ==
             std::string_view(sdkrt::kEventFileMagic, sizeof(sdkrt::kEventFileMagic)) ||
         prefix.substr(0, sizeof(sdkrt::kSpillMagic)) == std::string_view(sdkrt::kSpillMagic, sizeof(sdkrt::kSpillMagic));
}

Status ImportSdkEventFile(const std::string& path, TraceBuilder* builder) {
  RETURN_IF_ERROR(CheckImportPath(path));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrStatus(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return ErrStatus(path + ": not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* base = size == 0 ? nullptr : ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) return ErrStatus(path + ": cannot map: " + std::strerror(errno));
  struct Unmap {
    size_t size;
    void operator()(void* p) const {
      if (p) ::munmap(p, size);
    }
  };
  std::unique_ptr<void, Unmap> mapping(base, Unmap{size});
  // Named for the SIGBUS handler: a file truncated while it is read.
  struct Named {
    int slot;
    ~Named() { UnregisterMappedInput(slot); }
  } named{RegisterMappedInput(base, size, path)};
  EventFile file;
  const char* data = static_cast<const char*>(base);
  file.mapped = data;
  file.mapped_size = size;
  if ((size >= 2 && std::memcmp(data, "\x1f\x8b", 2) == 0) ||
      (size >= 4 && std::memcmp(data, "\x28\xb5\x2f\xfd", 4) == 0)) {
    // Its decompressed bytes said SDK, but the file is read in place: it
    // was "corrupt SDK event file at byte 0: not an SDK event file" (input
    // trial, 'in').
    return ErrStatus(path + ": a compressed SDK event file (" + (data[0] == '\x1f' ? "gzip" : "zstd") +
                     "); SDK files are read in place, uncompressed: decompress it first");
  }
  if (size >= sizeof(sdkrt::kSpillMagic) && std::memcmp(data, sdkrt::kSpillMagic, sizeof(sdkrt::kSpillMagic)) == 0) {
    RETURN_IF_ERROR(ReadSpillFile(data, size, path, &file));
  } else {
    RETURN_IF_ERROR(ReadEventFile(data, size, path, &file));
  }
  return SdkDecoder(file, builder, path).Run();
}

}  // namespace aiprof
