// Writes the threads' event streams to the SDK's event file (layout in
// event_stream.h). The SDK builds no model: importers/sdk/ turns the file
// into tracks, slices, steps, requests and flows through TraceBuilder when
// it is loaded. Here each event is copied as recorded, except that a name's
// address becomes its index in the file's string table (each distinct
// address measured and copied once).
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/base/libc/writer_temp.h"
#include "src/sdk/event_stream.h"
#include "src/sdk/sdk_internal.h"

namespace aiprof::sdkrt {
namespace {

// --- Hash map (open addressing, power-of-two capacity) --------------------------

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
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

// --- Temporary files of killed writers ---------------------------------------------

// The SDK's temporaries: the current form `<file>.tmp.<boot>-<pid>.XXXXXX`
// (any <file>) and earlier versions' `<file>.tmp.XXXXXX` (no owner: by age).
bool MatchTempFile(void*, const char* name, char boot[9], long* pid) {
  if (ParseWriterTempName(name, boot, pid)) return true;
  *pid = 0;
  const size_t n = strlen(name);
  return n > 11 && IsUnownedTempName(name, name, n - 11);
}

// No magic: empty (killed before its first MiB) or an event file's header
// with its magic still zero (written last). A temporary file with its
// magic is a whole event file whose rename was cut short: kept. An empty
// file of the earlier naming (`pid` 0) shows nothing of the SDK: kept.
bool HasNoMagic(void*, int fd, const struct stat& st, long pid) {
  if (st.st_size == 0) return pid > 0;
  unsigned char head[16];
  uint32_t version = 0, event_bytes = 0;
  if (st.st_size < static_cast<off_t>(sizeof(head)) || pread(fd, head, sizeof(head), 0) != sizeof(head)) return false;
  memcpy(&version, head + 8, 4);
  memcpy(&event_bytes, head + 12, 4);
  for (size_t i = 0; i < sizeof(kEventFileMagic); ++i) {
    if (head[i] != 0) return false;
  }
  return version == kEventFileVersion && event_bytes == sizeof(Event);
}

// `s` for stderr: bytes other than printable ASCII as \xNN (a name is
// whatever was in the folder; render's TerminalSafe is not the SDK's).
void PutEscaped(const char* s) {
  for (; *s; ++s) {
    const unsigned char c = static_cast<unsigned char>(*s);
    if (c < 0x20 || c >= 0x7f || c == '\\') {
      fprintf(stderr, "\\x%02x", c);
    } else {
      fputc(c, stderr);
    }
  }
}

void SayRemoved(void*, const char* dir, const char* name, bool, const char* why) {
  flockfile(stderr);
  fputs("aiprof: removed ", stderr);
  PutEscaped(dir);
  fputc('/', stderr);
  PutEscaped(name);
  fprintf(stderr, ", a temporary event file left by a write that did not finish: %s\n", why);
  funlockfile(stderr);
}

}  // namespace

int RemoveDeadWritersTempFiles(const char* dir) {
  WriterTempSweep sweep;
  sweep.match = &MatchTempFile;
  sweep.content_ok = &HasNoMagic;
  sweep.removed = &SayRemoved;
  return SweepWriterTemps(dir, sweep);
}

namespace {

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
    if (snprintf(path_, sizeof(path_), "%s", path) >= static_cast<int>(sizeof(path_))) return ENAMETOOLONG;
    buf_ = static_cast<char*>(malloc(kBuf));
    if (!buf_) return ENOMEM;
    // <path>.tmp.<boot>-<pid>.XXXXXX, locked while it is written: what
    // RemoveDeadWritersTempFiles needs to prove its writer gone.
    fd_ = CreateWriterTemp(path, false, tmp_, sizeof(tmp_));
    if (fd_ < 0) return errno;
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd_, 0666 & ~mask);
    return 0;
  }
  void Write(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
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
  template <typename T>
  void Value(T v) {
    Write(&v, sizeof(v));
  }
  // The file is whole on disk before its magic is: a writer killed before
  // the magic's write leaves a temporary file that no reader takes for an
  // event file (a folder of SDK files still loads), and one killed after it
  // leaves a whole file. Then the rename.
  int Commit() {
    Drain();
    if (err_ == 0 && fsync(fd_) != 0) err_ = errno;
    if (err_ == 0) posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);  // written: out of memory
    if (err_ == 0) {
      ssize_t n = pwrite(fd_, kEventFileMagic, sizeof(kEventFileMagic), 0);
      if (n != static_cast<ssize_t>(sizeof(kEventFileMagic))) err_ = n < 0 ? errno : EIO;
    }
    if (err_ == 0 && fdatasync(fd_) != 0) err_ = errno;
    if (close(fd_) != 0 && err_ == 0) err_ = errno;
    fd_ = -1;
    if (err_ == 0 && rename(tmp_, path_) != 0) err_ = errno;
    if (err_ != 0) unlink(tmp_);
    return err_;
  }
  int error() const { return err_; }

 private:
  static constexpr size_t kBuf = 1 << 20;
  // Writes the buffer, and streams the file out as it grows: each buffer's
  // writeback starts as soon as it is written (sync_file_range), and the
  // buffer before it, by then on its way, is waited for and dropped from the
  // page cache. So the file never piles up dirty in memory, where the kernel
  // throttled every process that dirtied pages (the recording threads' spill
  // chunks too) and the final fsync wrote it all at once (docs/sdk.md, "Flush
  // cost"). Hints only: a file system without them is written as before.
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
    if (err_ == 0 && used_ > 0) {
      const off_t at = static_cast<off_t>(size_), n = static_cast<off_t>(used_);
      sync_file_range(fd_, at, n, SYNC_FILE_RANGE_WRITE);
      if (size_ > 0) {
        const off_t before = static_cast<off_t>(prev_), prev_n = at - before;
        sync_file_range(fd_, before, prev_n,
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
        posix_fadvise(fd_, before, prev_n, POSIX_FADV_DONTNEED);
      }
      prev_ = size_;
      size_ += used_;
    }
    used_ = 0;
  }
  char path_[4096], tmp_[4200];
  char* buf_ = nullptr;
  size_t used_ = 0;
  size_t size_ = 0;  // bytes written
  size_t prev_ = 0;  // where the last buffer written starts
  int fd_ = -1;
  int err_ = 0;
};

// The names events point to, by address: each distinct address gets the next
// index; the texts are written after the events.
class Names {
 public:
  // Index of the name at `p`, or UINT32_MAX when memory ran out.
  uint32_t Index(uint64_t p) {
    uint64_t key = p ? p : 1;  // 0 is the map's empty key; address 1 holds no name
    if (uint32_t* id = by_address_.Find(key)) return *id;
    uint32_t id = static_cast<uint32_t>(addresses_.size());
    if (!addresses_.push_back(p) || !by_address_.Insert(key, id)) return UINT32_MAX;
    return id;
  }
  void Write(FileWriter& w) const {
    w.U64(addresses_.size());
    for (uint64_t p : addresses_) w.Str(p ? reinterpret_cast<const char*>(static_cast<uintptr_t>(p)) : "");
  }

 private:
  Vec<uint64_t> addresses_;
  U64Map by_address_;
};

void WriteHeader(FileWriter& w, const WriteRequest& req) {
  const char blank[sizeof(kEventFileMagic)] = {};  // the magic is written last (FileWriter::Commit)
  w.Write(blank, sizeof(blank));
  w.Value<uint32_t>(kEventFileVersion);
  w.Value<uint32_t>(sizeof(Event));
  w.Value<int64_t>(req.pid);
  w.Value<int32_t>(req.rank);
  w.Value<uint32_t>(req.clock.tsc ? 1 : 0);
  w.Value<int64_t>(req.clock.base_ns);
  w.Value<uint64_t>(req.clock.mult);
  w.Value<double>(req.clock.ns_per_tick);
  w.Value<double>(req.ring_mb);
  w.Str(req.process_name);
  w.Str(req.mode);
}

// One thread's header and events; false when memory ran out.
bool WriteThread(FileWriter& w, const ThreadView& view, Names* names) {
  uint64_t count = 0;
  for (size_t r = 0; r < view.run_count; ++r) count += view.runs[r].count;
  w.Value<int64_t>(view.tid);
  w.U64(view.recorded);
  w.U64(view.overwritten);
  w.Str(view.name, strnlen(view.name, sizeof(view.name)));
  w.U64(count);
  for (size_t r = 0; r < view.run_count; ++r) {
    const EventRun& run = view.runs[r];
    for (size_t k = 0; k < run.count; ++k) {
      Event e = run.events[k];
      if (EventNamesString(TypeOf(e))) {
        uint32_t index = names->Index(e.payload);
        if (index == UINT32_MAX) return false;
        e.payload = index;
      }
      w.Write(&e, sizeof(e));
    }
  }
  return true;
}

}  // namespace

int WriteEventFile(const WriteRequest& req, const char* path) {
  // The folder's leftovers of killed writes, once per folder the process
  // writes to (the last one; the caller holds the flush lock). Of a
  // distributed job, rank 0 alone (or a process without a rank): its
  // thousands of processes, one file each in one folder, would each read
  // the whole folder at exit.
  static char cleaned[4096] = {};
  char dir[4096];
  const char* slash = strrchr(path, '/');
  int n = !slash          ? snprintf(dir, sizeof(dir), ".")
          : slash == path ? snprintf(dir, sizeof(dir), "/")
                          : snprintf(dir, sizeof(dir), "%.*s", static_cast<int>(slash - path), path);
  if (req.rank <= 0 && n > 0 && n < static_cast<int>(sizeof(dir)) && strcmp(dir, cleaned) != 0) {
    RemoveDeadWritersTempFiles(dir);
    memcpy(cleaned, dir, sizeof(dir));
  }
  FileWriter w;
  if (int err = w.Open(path)) return err;
  WriteHeader(w, req);
  w.U64(req.thread_count);
  Names names;
  for (size_t t = 0; t < req.thread_count; ++t) {
    if (!WriteThread(w, req.threads[t], &names)) return ENOMEM;
  }
  names.Write(w);
  w.Write(kEventFileEnd, sizeof(kEventFileEnd));
  return w.error() ? w.error() : w.Commit();
}

}  // namespace aiprof::sdkrt
