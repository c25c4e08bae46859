// Turns the threads' event streams into the native .aiprof file.
//
// The layout is the model's (src/model/native_file.{h,cc}, version 5),
// written here without linking the model: "AIPROF\0\n", u32 version, the
// string table (u64 count, then u64 length + bytes each; string 0 empty),
// then every table's columns in Table::Columns order, each column a u64
// count, zero padding to an 8-byte file offset, and the raw values; then
// metadata and diagnostics (u64 count, then length-prefixed strings) and
// "AIPROFEND". test/sdk/sdk_test.cc reads the result with ReadNativeFile and
// checks this writer's version against the model's.
//
// What the model gets (every invariant ReadNativeFile and the analyses rely
// on, as TraceBuilder::Finalize would leave them):
//   - one thread track per recording thread (kind thread, layer application),
//     then one track per request lane (kind spans, "requests", "requests 2",
//     ...), then one counter track per counter name;
//   - slices sorted by (track, start, longest first), depth as Finalize
//     computes it, category "user_annotation" (kind user_annotation);
//     iterations are "ProfilerStep#N" slices and StepTable rows (by start);
//     nodes are "node:<name>" slices (src/analysis/pipeline: stage spans);
//   - a request is one slice named as given on the first lane free at its
//     start (arg "id"), with a flow (category "request") from the innermost
//     span open where it began to the innermost span open where it ended
//     (the request slice itself stands in for a side with no open span);
//   - marks are instants; counters are counter samples sorted per track.
// Spans still open when the file is written are left out (counted in
// metadata "sdk.open_spans"); ends without a begin are counted as
// diagnostics, except the ones a ring's overwritten part explains.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "src/sdk/sdk_internal.h"

namespace aiprof::sdkrt {
namespace {

constexpr uint32_t kNone = UINT32_MAX;
constexpr uint8_t kTrackThread = 0, kTrackCounter = 2, kTrackSpans = 3;  // model TrackKind
constexpr uint8_t kLayerApplication = 1;                                 // model Layer
constexpr uint8_t kKindUserAnnotation = 3;                               // model EventKind
constexpr uint8_t kArgUint = 1;                                          // model ArgType
constexpr int32_t kHostDevice = -1;

// --- Hash maps (open addressing, power-of-two capacity) -----------------------

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

uint64_t HashBytes(const char* s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 1099511628211ull;
  return Mix(h);
}

// uint64 key (never 0) -> uint32 value.
class U64Map {
 public:
  ~U64Map() { free(slots_); }
  uint32_t* Find(uint64_t key) {
    if (!cap_) return nullptr;
    for (size_t i = Mix(key) & (cap_ - 1);; i = (i + 1) & (cap_ - 1)) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }
  bool Insert(uint64_t key, uint32_t value) {
    if ((size_ + 1) * 2 > cap_ && !Grow()) return false;
    size_t i = Mix(key) & (cap_ - 1);
    while (slots_[i].key != 0 && slots_[i].key != key) i = (i + 1) & (cap_ - 1);
    if (slots_[i].key == 0) ++size_;
    slots_[i] = Slot{key, value};
    return true;
  }

 private:
  struct Slot {
    uint64_t key;
    uint32_t value;
  };
  bool Grow() {
    size_t cap = cap_ ? cap_ * 2 : 256;
    Slot* slots = static_cast<Slot*>(calloc(cap, sizeof(Slot)));
    if (!slots) return false;
    for (size_t j = 0; j < cap_; ++j) {
      if (slots_[j].key == 0) continue;
      size_t i = Mix(slots_[j].key) & (cap - 1);
      while (slots[i].key != 0) i = (i + 1) & (cap - 1);
      slots[i] = slots_[j];
    }
    free(slots_);
    slots_ = slots;
    cap_ = cap;
    return true;
  }
  Slot* slots_ = nullptr;
  size_t cap_ = 0, size_ = 0;
};

// The string table: ids by content (equal text, one id), with a cache by
// address so each distinct name pointer is measured and hashed once.
class Strings {
 public:
  Strings() { Add("", 0); }
  ~Strings() {
    for (char* p : arenas_) free(p);
  }
  uint32_t ByPointer(const char* p) {
    uint64_t key = reinterpret_cast<uintptr_t>(p);
    if (uint32_t* id = by_pointer_.Find(key)) return *id;
    uint32_t id = Add(p, strlen(p));
    by_pointer_.Insert(key, id);
    return id;
  }
  // "node:" + name, cached by the name's address.
  uint32_t NodeName(const char* p) {
    uint64_t key = reinterpret_cast<uintptr_t>(p);
    if (uint32_t* id = node_by_pointer_.Find(key)) return *id;
    size_t n = strlen(p);
    char* tmp = static_cast<char*>(malloc(n + 6));
    if (!tmp) return 0;
    memcpy(tmp, "node:", 5);
    memcpy(tmp + 5, p, n + 1);
    uint32_t id = Add(tmp, n + 5);
    free(tmp);
    node_by_pointer_.Insert(key, id);
    return id;
  }
  uint32_t Text(const char* s) { return Add(s, strlen(s)); }
  uint32_t Add(const char* s, size_t n) {
    uint64_t h = HashBytes(s, n) | 1;
    for (uint64_t probe = h;; probe = Mix(probe) | 1) {
      uint32_t* id = by_hash_.Find(probe);
      if (!id) break;
      if (lengths_[*id] == n && memcmp(texts_[*id], s, n) == 0) return *id;
    }
    char* copy = Copy(s, n);
    if (!copy) return 0;
    uint32_t id = static_cast<uint32_t>(texts_.size());
    texts_.push_back(copy);
    lengths_.push_back(n);
    uint64_t probe = h;
    while (by_hash_.Find(probe)) probe = Mix(probe) | 1;
    by_hash_.Insert(probe, id);
    return id;
  }
  size_t size() const { return texts_.size(); }
  const char* text(size_t i) const { return texts_[i]; }
  size_t length(size_t i) const { return lengths_[i]; }

 private:
  char* Copy(const char* s, size_t n) {
    if (arena_used_ + n + 1 > arena_cap_) {
      size_t cap = n + 1 > (1u << 16) ? n + 1 : (1u << 16);
      char* a = static_cast<char*>(malloc(cap));
      if (!a || !arenas_.push_back(a)) {
        free(a);
        return nullptr;
      }
      arena_ = a;
      arena_cap_ = cap;
      arena_used_ = 0;
    }
    char* p = arena_ + arena_used_;
    memcpy(p, s, n);
    p[n] = '\0';
    arena_used_ += n + 1;
    return p;
  }
  Vec<const char*> texts_;
  Vec<size_t> lengths_;
  U64Map by_hash_, by_pointer_, node_by_pointer_;
  Vec<char*> arenas_;
  char* arena_ = nullptr;
  size_t arena_cap_ = 0, arena_used_ = 0;
};

// --- Decoded records ------------------------------------------------------------

struct SliceRec {
  int64_t ts_ns;
  int64_t dur_ns;  // -1 while open
  uint32_t name;
  uint32_t arg;  // index into args + 1, or 0
};

struct Open {
  uint32_t slice;  // index in the thread's slices (begin order)
  uint8_t cls;     // 0 span, 1 node, 2 iteration
};

struct StepRec {
  uint32_t thread, slice;  // slice: begin-order index, then final global index
  int64_t number;
};

struct RequestEnd {
  uint64_t id;
  int64_t ts_ns;
  uint32_t thread, anchor;  // anchor: begin-order slice index or kNone
  uint32_t name;            // begins only
};

struct CounterRec {
  uint32_t track;  // counter index, then track
  uint32_t seq;
  int64_t ts_ns;
  double value;
};

struct InstantRec {
  int64_t ts_ns;
  uint32_t name, track;
};

struct RequestRec {
  int64_t ts_ns, dur_ns;
  uint64_t id;
  uint32_t name, from, to;  // from/to: final global slice indices or kNone
  uint32_t lane;
};

struct ArgRec {
  uint32_t key;
  uint8_t type;
  uint8_t pad[3];
  uint64_t value;
};
static_assert(sizeof(ArgRec) == 16, "matches the model's Arg");

struct Counts {
  uint64_t unmatched_end = 0, unclosed = 0, open_at_write = 0, ring_partial = 0, orphan_names = 0;
  uint64_t request_unmatched_end = 0, requests_in_flight = 0, request_duplicate_end = 0;
};

// Everything decoded from all threads.
struct Decoded {
  Strings strings;
  Vec<SliceRec>* slices = nullptr;   // per thread
  Vec<uint32_t>* remap = nullptr;    // per thread: begin-order index -> index after compaction/sort
  Vec<uint32_t> slice_offset;        // per thread: first global slice index
  Vec<StepRec> steps;
  Vec<RequestEnd> req_begins, req_ends;
  Vec<RequestRec> requests;
  Vec<uint32_t> counter_names;  // counter index -> string id
  U64Map counter_index;         // string id + 1 -> counter index
  Vec<CounterRec> counters;
  Vec<InstantRec> instants;
  Vec<ArgRec> args;
  Counts counts;
  uint32_t lanes = 0;
  uint32_t step_name_cache_n = 0;
};

int64_t ToNs(const ClockParams& c, int64_t ticks) {
  if (!c.tsc) return c.base_ns + ticks;
  unsigned __int128 mag = static_cast<unsigned __int128>(ticks < 0 ? -ticks : ticks) * c.mult;
  int64_t ns = static_cast<int64_t>(mag >> 32);
  return c.base_ns + (ticks < 0 ? -ns : ns);
}

// Closes the innermost open entry of class `cls` at `ts`; entries above it
// close with it (their end was never recorded).
void Close(Vec<Open>* stack, Vec<SliceRec>* slices, uint8_t cls, int64_t ts, bool ring_loss, Counts* counts) {
  size_t i = stack->size();
  while (i > 0 && (*stack)[i - 1].cls != cls) --i;
  if (i == 0) {
    if (ring_loss) {
      ++counts->ring_partial;
    } else {
      ++counts->unmatched_end;
    }
    return;
  }
  while (stack->size() >= i) {
    SliceRec& s = (*slices)[stack->back().slice];
    s.dur_ns = ts > s.ts_ns ? ts - s.ts_ns : 0;
    if (stack->size() > i) ++counts->unclosed;
    stack->pop_back();
  }
}

bool DecodeThread(const ThreadView& view, uint32_t thread, const ClockParams& clock, Decoded* d) {
  Vec<SliceRec>& slices = d->slices[thread];
  Vec<Open> stack;
  const bool ring_loss = view.overwritten > 0;
  const Event* pending = nullptr;  // an event waiting for its kExtName
  for (size_t r = 0; r < view.run_count; ++r) {
    const EventRun& run = view.runs[r];
    for (size_t k = 0; k < run.count; ++k) {
      const Event& e = run.events[k];
      uint8_t type = TypeOf(e);
      if (pending && type != kExtName) pending = nullptr;  // cannot happen: pairs commit together
      if (type == kExtName) {
        if (!pending) {
          ++d->counts.orphan_names;  // its event was overwritten in the ring
          continue;
        }
        const char* name = reinterpret_cast<const char*>(static_cast<uintptr_t>(e.payload));
        int64_t ts = ToNs(clock, TicksOf(*pending));
        if (TypeOf(*pending) == kRequestBegin) {
          uint32_t anchor = stack.empty() ? kNone : stack.back().slice;
          d->req_begins.push_back(RequestEnd{pending->payload, ts, thread, anchor, d->strings.ByPointer(name)});
        } else {
          uint32_t sid = d->strings.ByPointer(name);
          uint32_t* index = d->counter_index.Find(uint64_t{sid} + 1);
          uint32_t counter;
          if (index) {
            counter = *index;
          } else {
            counter = static_cast<uint32_t>(d->counter_names.size());
            d->counter_names.push_back(sid);
            d->counter_index.Insert(uint64_t{sid} + 1, counter);
          }
          double value;
          memcpy(&value, &pending->payload, sizeof(value));
          d->counters.push_back(CounterRec{counter, static_cast<uint32_t>(d->counters.size()), ts, value});
        }
        pending = nullptr;
        continue;
      }
      int64_t ts = ToNs(clock, TicksOf(e));
      const char* ptr = reinterpret_cast<const char*>(static_cast<uintptr_t>(e.payload));
      switch (type) {
        case kSpanBegin:
        case kNodeBegin:
        case kIterStart: {
          uint32_t name;
          uint8_t cls;
          if (type == kSpanBegin) {
            name = d->strings.ByPointer(ptr), cls = 0;
          } else if (type == kNodeBegin) {
            name = d->strings.NodeName(ptr), cls = 1;
          } else {
            char text[40];
            snprintf(text, sizeof(text), "ProfilerStep#%llu", static_cast<unsigned long long>(e.payload));
            name = d->strings.Text(text), cls = 2;
            d->steps.push_back(StepRec{thread, static_cast<uint32_t>(slices.size()), static_cast<int64_t>(e.payload)});
          }
          stack.push_back(Open{static_cast<uint32_t>(slices.size()), cls});
          slices.push_back(SliceRec{ts, -1, name, 0});
          break;
        }
        case kSpanEnd: Close(&stack, &slices, 0, ts, ring_loss, &d->counts); break;
        case kNodeEnd: Close(&stack, &slices, 1, ts, ring_loss, &d->counts); break;
        case kIterEnd: Close(&stack, &slices, 2, ts, ring_loss, &d->counts); break;
        case kRequestBegin:
        case kCounter: pending = &e; break;
        case kRequestEnd: {
          uint32_t anchor = stack.empty() ? kNone : stack.back().slice;
          d->req_ends.push_back(RequestEnd{e.payload, ts, thread, anchor, 0});
          break;
        }
        case kMark: d->instants.push_back(InstantRec{ts, d->strings.ByPointer(ptr), thread}); break;
        default: break;
      }
    }
  }
  d->counts.open_at_write += stack.size();
  return !slices.failed() && !stack.failed();
}

// Drops slices still open, sorts by (start, longest first) where clock
// ties broke the begin order, and records where each begin-order slice went.
bool CompactThread(Vec<SliceRec>* slices, Vec<uint32_t>* remap) {
  size_t n = slices->size();
  if (!remap->resize(n)) return false;
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if ((*slices)[i].dur_ns < 0) {
      (*remap)[i] = kNone;
      continue;
    }
    (*remap)[i] = static_cast<uint32_t>(kept);
    (*slices)[kept++] = (*slices)[i];
  }
  slices->resize(kept);
  auto less = [](const SliceRec& a, const SliceRec& b) {
    return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.dur_ns > b.dur_ns;
  };
  if (std::is_sorted(slices->begin(), slices->end(), less)) return true;
  // Rare (equal timestamps, or a clock step back): sort positions, remap.
  Vec<uint32_t> order;
  if (!order.resize(kept)) return false;
  for (size_t i = 0; i < kept; ++i) order[i] = static_cast<uint32_t>(i);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const SliceRec& x = (*slices)[a];
    const SliceRec& y = (*slices)[b];
    return less(x, y) || (!less(y, x) && a < b);
  });
  Vec<SliceRec> sorted;
  Vec<uint32_t> where;
  if (!sorted.resize(kept) || !where.resize(kept)) return false;
  for (size_t i = 0; i < kept; ++i) {
    sorted[i] = (*slices)[order[i]];
    where[order[i]] = static_cast<uint32_t>(i);
  }
  memcpy(slices->data(), sorted.data(), kept * sizeof(SliceRec));
  for (size_t i = 0; i < n; ++i) {
    if ((*remap)[i] != kNone) (*remap)[i] = where[(*remap)[i]];
  }
  return true;
}

uint32_t GlobalSlice(const Decoded& d, uint32_t thread, uint32_t begin_index) {
  if (begin_index == kNone) return kNone;
  uint32_t local = d.remap[thread][begin_index];
  return local == kNone ? kNone : d.slice_offset[thread] + local;
}

// Pairs request begins and ends by id; assigns lanes (the lane that has been
// free longest) so requests on one lane never overlap.
bool MatchRequests(Decoded* d, uint32_t first_request_slice, bool ring_loss) {
  auto by_id = [](const RequestEnd& a, const RequestEnd& b) { return a.id != b.id ? a.id < b.id : a.ts_ns < b.ts_ns; };
  std::sort(d->req_begins.begin(), d->req_begins.end(), by_id);
  std::sort(d->req_ends.begin(), d->req_ends.end(), by_id);
  size_t b = 0, e = 0;
  while (b < d->req_begins.size() || e < d->req_ends.size()) {
    if (e == d->req_ends.size() || (b < d->req_begins.size() && d->req_begins[b].id < d->req_ends[e].id)) {
      ++d->counts.requests_in_flight;
      ++b;
      continue;
    }
    if (b == d->req_begins.size() || d->req_ends[e].id < d->req_begins[b].id) {
      if (ring_loss) {
        ++d->counts.ring_partial;
      } else {
        ++d->counts.request_unmatched_end;
      }
      ++e;
      continue;
    }
    const RequestEnd& rb = d->req_begins[b];
    const RequestEnd& re = d->req_ends[e];
    RequestRec r;
    r.ts_ns = rb.ts_ns;
    r.dur_ns = re.ts_ns > rb.ts_ns ? re.ts_ns - rb.ts_ns : 0;
    r.id = rb.id;
    r.name = rb.name;
    r.from = GlobalSlice(*d, rb.thread, rb.anchor);
    r.to = GlobalSlice(*d, re.thread, re.anchor);
    r.lane = 0;
    if (!d->requests.push_back(r)) return false;
    ++b, ++e;
    while (e < d->req_ends.size() && d->req_ends[e].id == r.id) ++d->counts.request_duplicate_end, ++e;
  }
  std::sort(d->requests.begin(), d->requests.end(), [](const RequestRec& x, const RequestRec& y) {
    if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
    if (x.dur_ns != y.dur_ns) return x.dur_ns > y.dur_ns;
    return x.id < y.id;
  });
  // Min-heap of (lane end, lane).
  struct Lane {
    int64_t end_ns;
    uint32_t lane;
  };
  auto later = [](const Lane& x, const Lane& y) { return x.end_ns != y.end_ns ? x.end_ns > y.end_ns : x.lane > y.lane; };
  Vec<Lane> heap;
  Vec<uint32_t> lane_count;
  for (RequestRec& r : d->requests) {
    if (!heap.empty() && heap[0].end_ns <= r.ts_ns) {
      std::pop_heap(heap.begin(), heap.end(), later);
      r.lane = heap.back().lane;
      heap.back().end_ns = r.ts_ns + r.dur_ns;
    } else {
      r.lane = d->lanes++;
      if (!heap.push_back(Lane{r.ts_ns + r.dur_ns, r.lane}) || !lane_count.push_back(0)) return false;
    }
    std::push_heap(heap.begin(), heap.end(), later);
    ++lane_count[r.lane];
  }
  // Slices sort by track: order requests by (lane, start, longest first).
  std::sort(d->requests.begin(), d->requests.end(), [](const RequestRec& x, const RequestRec& y) {
    if (x.lane != y.lane) return x.lane < y.lane;
    if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
    return x.dur_ns != y.dur_ns ? x.dur_ns > y.dur_ns : x.id < y.id;
  });
  uint32_t id_key = d->strings.Text("id");
  for (size_t i = 0; i < d->requests.size(); ++i) {
    RequestRec& r = d->requests[i];
    uint32_t self = first_request_slice + static_cast<uint32_t>(i);
    if (r.from == kNone) r.from = self;
    if (r.to == kNone) r.to = self;
    if (!d->args.push_back(ArgRec{id_key, kArgUint, {0, 0, 0}, r.id})) return false;
  }
  return true;
}

// --- The file -------------------------------------------------------------------

class FileWriter {
 public:
  ~FileWriter() {
    if (fd_ >= 0) {
      close(fd_);
      unlink(tmp_);
    }
    free(buf_);
  }
  int Open(const char* path) {
    if (snprintf(path_, sizeof(path_), "%s", path) >= static_cast<int>(sizeof(path_)) ||
        snprintf(tmp_, sizeof(tmp_), "%s.tmp.XXXXXX", path) >= static_cast<int>(sizeof(tmp_))) {
      return ENAMETOOLONG;
    }
    buf_ = static_cast<char*>(malloc(kBuf));
    if (!buf_) return ENOMEM;
    fd_ = mkstemp(tmp_);
    if (fd_ < 0) return errno;
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd_, 0666 & ~mask);
    return 0;
  }
  void Write(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    pos_ += n;
    while (n > 0 && err_ == 0) {
      size_t take = kBuf - used_ < n ? kBuf - used_ : n;
      memcpy(buf_ + used_, p, take);
      used_ += take, p += take, n -= take;
      if (used_ == kBuf) Drain();
    }
  }
  void U64(uint64_t v) { Write(&v, 8); }
  void Str(const char* s, size_t n) {
    U64(n);
    Write(s, n);
  }
  void Str(const char* s) { Str(s, strlen(s)); }
  // A column header: count, then padding to an 8-byte offset.
  void ColumnHeader(uint64_t count) {
    U64(count);
    static const char kZeros[8] = {};
    Write(kZeros, (8 - pos_ % 8) % 8);
  }
  template <typename T>
  void Value(T v) {
    Write(&v, sizeof(v));
  }
  template <typename T>
  void EmptyColumns(int n) {
    for (int i = 0; i < n; ++i) ColumnHeader(0);
  }
  int Commit() {
    Drain();
    if (err_ == 0 && fsync(fd_) != 0) err_ = errno;
    if (close(fd_) != 0 && err_ == 0) err_ = errno;
    fd_ = -1;
    if (err_ == 0 && rename(tmp_, path_) != 0) err_ = errno;
    if (err_ != 0) unlink(tmp_);
    return err_;
  }
  int error() const { return err_; }

 private:
  static constexpr size_t kBuf = 1 << 20;
  void Drain() {
    size_t off = 0;
    while (off < used_ && err_ == 0) {
      ssize_t w = write(fd_, buf_ + off, used_ - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        err_ = w < 0 ? errno : EIO;
        break;
      }
      off += static_cast<size_t>(w);
    }
    used_ = 0;
  }
  char path_[4096], tmp_[4200];
  char* buf_ = nullptr;
  size_t used_ = 0;
  uint64_t pos_ = 0;
  int fd_ = -1;
  int err_ = 0;
};

struct Layout {
  uint32_t threads, lanes, counters;
  uint32_t first_lane_track() const { return threads; }
  uint32_t first_counter_track() const { return threads + lanes; }
  uint32_t tracks() const { return threads + lanes + counters; }
};

// Calls f(track, slice) for every slice in file order.
template <typename F>
void ForEachSlice(const Decoded& d, const Layout& l, F f) {
  for (uint32_t t = 0; t < l.threads; ++t) {
    for (const SliceRec& s : d.slices[t]) f(t, s.ts_ns, s.dur_ns, s.name, 0u);
  }
  for (size_t i = 0; i < d.requests.size(); ++i) {
    const RequestRec& r = d.requests[i];
    f(l.first_lane_track() + r.lane, r.ts_ns, r.dur_ns, r.name, static_cast<uint32_t>(i + 1));
  }
}

void WriteTracks(FileWriter& w, const WriteRequest& req, const Decoded& d, const Layout& l, const uint32_t* thread_names,
                 const uint32_t* lane_names, uint32_t process_name) {
  uint64_t n = l.tracks();
  w.ColumnHeader(n);  // kind
  for (uint64_t i = 0; i < n; ++i) {
    w.Value<uint8_t>(i < l.threads ? kTrackThread : i < l.first_counter_track() ? kTrackSpans : kTrackCounter);
  }
  w.ColumnHeader(n);  // layer
  for (uint64_t i = 0; i < n; ++i) w.Value<uint8_t>(kLayerApplication);
  w.ColumnHeader(n);  // pid
  for (uint64_t i = 0; i < n; ++i) w.Value<int64_t>(req.pid);
  w.ColumnHeader(n);  // tid
  for (uint64_t i = 0; i < n; ++i) w.Value<int64_t>(i < l.threads ? req.threads[i].tid : -1);
  w.ColumnHeader(n);  // pid_label
  for (uint64_t i = 0; i < n; ++i) w.Value<uint32_t>(0);
  auto label = [&](uint64_t i) -> uint32_t {
    if (i < l.threads) return 0;
    if (i < l.first_counter_track()) return lane_names[i - l.threads];
    return d.counter_names[i - l.first_counter_track()];
  };
  w.ColumnHeader(n);  // tid_label
  for (uint64_t i = 0; i < n; ++i) w.Value<uint32_t>(label(i));
  w.ColumnHeader(n);  // name
  for (uint64_t i = 0; i < n; ++i) w.Value<uint32_t>(i < l.threads ? thread_names[i] : label(i));
  w.ColumnHeader(n);  // process_name
  for (uint64_t i = 0; i < n; ++i) w.Value<uint32_t>(process_name);
  w.ColumnHeader(n);  // rank
  for (uint64_t i = 0; i < n; ++i) w.Value<int32_t>(req.rank);
  w.ColumnHeader(n);  // device
  for (uint64_t i = 0; i < n; ++i) w.Value<int32_t>(kHostDevice);
}

void WriteSlices(FileWriter& w, const Decoded& d, const Layout& l, uint64_t n, uint32_t category) {
  w.ColumnHeader(n);
  ForEachSlice(d, l, [&](uint32_t, int64_t ts, int64_t, uint32_t, uint32_t) { w.Value<int64_t>(ts); });
  w.ColumnHeader(n);
  ForEachSlice(d, l, [&](uint32_t, int64_t, int64_t dur, uint32_t, uint32_t) { w.Value<int64_t>(dur); });
  w.ColumnHeader(n);
  ForEachSlice(d, l, [&](uint32_t, int64_t, int64_t, uint32_t name, uint32_t) { w.Value<uint32_t>(name); });
  w.ColumnHeader(n);
  for (uint64_t i = 0; i < n; ++i) w.Value<uint32_t>(category);
  w.ColumnHeader(n);
  for (uint64_t i = 0; i < n; ++i) w.Value<uint8_t>(kKindUserAnnotation);
  w.ColumnHeader(n);
  ForEachSlice(d, l, [&](uint32_t track, int64_t, int64_t, uint32_t, uint32_t) { w.Value<uint32_t>(track); });
  // Depth exactly as TraceBuilder::ComputeDepthAndKinds computes it.
  w.ColumnHeader(n);
  Vec<int64_t> open_ends;
  uint32_t current = UINT32_MAX;
  ForEachSlice(d, l, [&](uint32_t track, int64_t ts, int64_t dur, uint32_t, uint32_t) {
    if (track != current) open_ends.clear(), current = track;
    while (!open_ends.empty() && open_ends.back() <= ts) open_ends.pop_back();
    w.Value<uint16_t>(static_cast<uint16_t>(open_ends.size() < 65535 ? open_ends.size() : 65535));
    open_ends.push_back(ts + dur);
  });
  w.ColumnHeader(n);  // correlation
  for (uint64_t i = 0; i < n; ++i) w.Value<int64_t>(-1);
  w.ColumnHeader(n);  // arg_begin
  ForEachSlice(d, l, [&](uint32_t, int64_t, int64_t, uint32_t, uint32_t arg) { w.Value<uint64_t>(arg ? arg - 1 : 0); });
  w.ColumnHeader(n);  // arg_count
  ForEachSlice(d, l, [&](uint32_t, int64_t, int64_t, uint32_t, uint32_t arg) { w.Value<uint16_t>(arg ? 1 : 0); });
}

// Metadata entries, collected first because the file gives their count first.
class MetaList {
 public:
  void Add(const char* key, const char* value) {
    if (n_ == kMax) return;
    keys_[n_] = key;
    snprintf(values_[n_], sizeof(values_[n_]), "%s", value);
    ++n_;
  }
  void AddU64(const char* key, uint64_t v) {
    char text[32];
    snprintf(text, sizeof(text), "%llu", static_cast<unsigned long long>(v));
    Add(key, text);
  }
  void Write(FileWriter& w) const {
    w.U64(n_);
    for (size_t i = 0; i < n_; ++i) {
      w.Str(keys_[i]);
      w.Str(values_[i]);
    }
  }

 private:
  static constexpr size_t kMax = 32;
  const char* keys_[kMax];
  char values_[kMax][80];
  size_t n_ = 0;
};

void WriteTail(FileWriter& w, const WriteRequest& req, const Decoded& d) {
  uint64_t recorded = 0, held = 0, overwritten = 0;
  for (size_t i = 0; i < req.thread_count; ++i) {
    recorded += req.threads[i].recorded;
    overwritten += req.threads[i].overwritten;
    for (size_t r = 0; r < req.threads[i].run_count; ++r) held += req.threads[i].runs[r].count;
  }
  char text[64];
  const Counts& c = d.counts;
  MetaList meta;
  meta.Add("source_format", "aiprof_sdk");
  meta.Add("clock_domain", "CLOCK_MONOTONIC");
  meta.Add("process_name", req.process_name);
  meta.AddU64("pid", static_cast<uint64_t>(req.pid));
  if (req.rank >= 0) meta.AddU64("rank", static_cast<uint64_t>(req.rank));
  meta.AddU64("sdk.abi_version", 1);
  meta.Add("sdk.mode", req.mode);
  snprintf(text, sizeof(text), "%g", req.ring_mb);
  meta.Add("sdk.ring_mb", text);
  meta.Add("sdk.clock", req.clock.tsc ? "tsc" : "monotonic");
  snprintf(text, sizeof(text), "%.9f", req.clock.ns_per_tick);
  meta.Add("sdk.ns_per_tick", text);
  meta.AddU64("sdk.bytes_per_event", sizeof(Event));
  meta.AddU64("sdk.threads", req.thread_count);
  meta.AddU64("sdk.events_recorded", recorded);
  meta.AddU64("sdk.events_written", held);
  meta.AddU64("sdk.events_overwritten", overwritten);
  meta.AddU64("sdk.open_spans", c.open_at_write);
  meta.AddU64("sdk.requests_in_flight", c.requests_in_flight);
  meta.AddU64("sdk.ring_partial", c.ring_partial + c.orphan_names);
  meta.Write(w);
  // Diagnostics: misuse the writer repaired or dropped.
  struct Diag {
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
  };
  uint64_t n = 0;
  for (const Diag& x : diags) n += x.count > 0;
  w.U64(n);
  for (const Diag& x : diags) {
    if (x.count == 0) continue;
    w.Str(x.kind);
    w.U64(x.count);
    w.Str("aiprof SDK");
    w.Str(x.what);
  }
}

int Write(const WriteRequest& req, Decoded& d, const char* path) {
  Layout l{static_cast<uint32_t>(req.thread_count), d.lanes, static_cast<uint32_t>(d.counter_names.size())};
  Vec<uint32_t> thread_names, lane_names;
  for (size_t i = 0; i < req.thread_count; ++i) thread_names.push_back(d.strings.Text(req.threads[i].name));
  for (uint32_t i = 0; i < l.lanes; ++i) {
    char text[32];
    if (i == 0) {
      snprintf(text, sizeof(text), "requests");
    } else {
      snprintf(text, sizeof(text), "requests %u", i + 1);
    }
    lane_names.push_back(d.strings.Text(text));
  }
  uint32_t process_name = d.strings.Text(req.process_name);
  uint32_t category = d.strings.Text("user_annotation");
  uint32_t mark_category = d.strings.Text("mark");
  uint32_t flow_category = d.strings.Text("request");
  if (thread_names.failed() || lane_names.failed()) return ENOMEM;

  FileWriter w;
  if (int err = w.Open(path)) return err;
  w.Write("AIPROF\0\n", 8);
  w.Value<uint32_t>(kWriterNativeVersion);
  w.U64(d.strings.size());
  for (size_t i = 0; i < d.strings.size(); ++i) w.Str(d.strings.text(i), d.strings.length(i));
  WriteTracks(w, req, d, l, thread_names.data(), lane_names.data(), process_name);
  uint64_t slice_count = d.requests.size();
  for (uint32_t t = 0; t < l.threads; ++t) slice_count += d.slices[t].size();
  WriteSlices(w, d, l, slice_count, category);
  w.ColumnHeader(d.args.size());
  w.Write(d.args.data(), d.args.size() * sizeof(ArgRec));
  // Instants.
  uint64_t n = d.instants.size();
  w.ColumnHeader(n);
  for (const InstantRec& x : d.instants) w.Value<int64_t>(x.ts_ns);
  w.ColumnHeader(n);
  for (const InstantRec& x : d.instants) w.Value<uint32_t>(x.name);
  w.ColumnHeader(n);
  for (uint64_t i = 0; i < n; ++i) w.Value<uint32_t>(mark_category);
  w.ColumnHeader(n);
  for (const InstantRec& x : d.instants) w.Value<uint32_t>(x.track);
  w.ColumnHeader(n);
  for (uint64_t i = 0; i < n; ++i) w.Value<char>('t');
  w.ColumnHeader(n);
  for (uint64_t i = 0; i < n; ++i) w.Value<uint64_t>(0);
  w.ColumnHeader(n);
  for (uint64_t i = 0; i < n; ++i) w.Value<uint16_t>(0);
  // Counters.
  n = d.counters.size();
  w.ColumnHeader(n);
  for (const CounterRec& x : d.counters) w.Value<int64_t>(x.ts_ns);
  w.ColumnHeader(n);
  for (const CounterRec& x : d.counters) w.Value<uint32_t>(l.first_counter_track() + x.track);
  w.ColumnHeader(n);
  for (const CounterRec& x : d.counters) w.Value<double>(x.value);
  // Flows.
  uint64_t flows = 0;
  for (const RequestRec& r : d.requests) flows += r.from != r.to;
  w.ColumnHeader(flows);
  for (const RequestRec& r : d.requests) if (r.from != r.to) w.Value<uint32_t>(r.from);
  w.ColumnHeader(flows);
  for (const RequestRec& r : d.requests) if (r.from != r.to) w.Value<uint32_t>(r.to);
  w.ColumnHeader(flows);
  for (const RequestRec& r : d.requests) if (r.from != r.to) w.Value<uint64_t>(r.id);
  w.ColumnHeader(flows);
  for (const RequestRec& r : d.requests) if (r.from != r.to) w.Value<uint32_t>(flow_category);
  // Steps (closed ones, by start).
  n = d.steps.size();
  auto step_slice = [&](const StepRec& s) -> const SliceRec& { return d.slices[s.thread][s.slice - d.slice_offset[s.thread]]; };
  w.ColumnHeader(n);
  for (const StepRec& s : d.steps) w.Value<uint32_t>(step_slice(s).name);
  w.ColumnHeader(n);
  for (const StepRec& s : d.steps) w.Value<int64_t>(s.number);
  w.ColumnHeader(n);
  for (const StepRec& s : d.steps) w.Value<int64_t>(step_slice(s).ts_ns);
  w.ColumnHeader(n);
  for (const StepRec& s : d.steps) w.Value<int64_t>(step_slice(s).dur_ns);
  w.ColumnHeader(n);
  for (const StepRec& s : d.steps) w.Value<uint32_t>(s.thread);
  w.ColumnHeader(n);
  for (uint64_t i = 0; i < n; ++i) w.Value<int32_t>(req.rank);
  // Op metrics (7 columns), step breakdown (5), callsites (5), stack samples (4): empty.
  for (int i = 0; i < 7 + 5 + 5 + 4; ++i) w.ColumnHeader(0);
  // Op statistics: not stored (0 slices described, 7 empty columns); readers compute them.
  w.U64(0);
  for (int i = 0; i < 7; ++i) w.ColumnHeader(0);
  WriteTail(w, req, d);
  w.Write("AIPROFEND", 9);
  return w.error() ? w.error() : w.Commit();
}

}  // namespace

int WriteNativeTrace(const WriteRequest& req, const char* path) {
  Decoded d;
  size_t threads = req.thread_count;
  d.slices = static_cast<Vec<SliceRec>*>(calloc(threads ? threads : 1, sizeof(Vec<SliceRec>)));
  d.remap = static_cast<Vec<uint32_t>*>(calloc(threads ? threads : 1, sizeof(Vec<uint32_t>)));
  int err = 0;
  bool ring_loss = false;
  if (!d.slices || !d.remap) {
    err = ENOMEM;
  } else {
    for (size_t t = 0; t < threads; ++t) {
      new (&d.slices[t]) Vec<SliceRec>();
      new (&d.remap[t]) Vec<uint32_t>();
    }
    uint32_t offset = 0;
    for (size_t t = 0; t < threads && err == 0; ++t) {
      ring_loss = ring_loss || req.threads[t].overwritten > 0;
      if (!DecodeThread(req.threads[t], static_cast<uint32_t>(t), req.clock, &d) ||
          !CompactThread(&d.slices[t], &d.remap[t])) {
        err = ENOMEM;
      }
      d.slice_offset.push_back(offset);
      offset += static_cast<uint32_t>(d.slices[t].size());
    }
    // Steps: final indices, closed ones only, by start.
    size_t kept = 0;
    for (size_t i = 0; err == 0 && i < d.steps.size(); ++i) {
      StepRec s = d.steps[i];
      s.slice = GlobalSlice(d, s.thread, s.slice);
      if (s.slice != kNone) d.steps[kept++] = s;
    }
    d.steps.resize(kept);
    std::sort(d.steps.begin(), d.steps.end(), [&](const StepRec& a, const StepRec& b) {
      int64_t ta = d.slices[a.thread][a.slice - d.slice_offset[a.thread]].ts_ns;
      int64_t tb = d.slices[b.thread][b.slice - d.slice_offset[b.thread]].ts_ns;
      return ta != tb ? ta < tb : a.number < b.number;
    });
    std::sort(d.counters.begin(), d.counters.end(), [](const CounterRec& a, const CounterRec& b) {
      if (a.track != b.track) return a.track < b.track;
      return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.seq < b.seq;
    });
    if (err == 0 && !MatchRequests(&d, offset, ring_loss)) err = ENOMEM;
    if (err == 0 && (d.strings.size() == 0 || d.counters.failed() || d.instants.failed() || d.steps.failed())) {
      err = ENOMEM;
    }
    if (err == 0) err = Write(req, d, path);
  }
  for (size_t t = 0; d.slices && d.remap && t < threads; ++t) {
    d.slices[t].~Vec<SliceRec>();
    d.remap[t].~Vec<uint32_t>();
  }
  free(d.slices);
  free(d.remap);
  return err;
}

}  // namespace aiprof::sdkrt
