// The tracing runtime behind include/aiprof/aiprof.h.
//
// Hot path (every call): one relaxed load of the enabled flag (and, for
// requests, steps and counters, one of the live channel's pointer: live.cc), one
// thread-local load of the calling thread's buffer, a clock read (RDTSC, or
// clock_gettime where there is no invariant TSC), a 16-byte store and a
// release store of the thread's committed count. No lock, no allocation, no
// system call: buffers grow by whole chunks that are mapped and faulted in
// (MAP_POPULATE) before the hot path writes to them.
//
// Buffers: each thread registers once (under a mutex) into a global list
// that outlives the thread, so events of threads that exited are kept. A
// thread that exits writes an exit marker (its tid and name) into its buffer
// and hands the buffer to an idle stack; once AIPROF_THREAD_BUFFERS buffers
// exist, a new thread takes the buffer that went idle last (its pages are
// warm, and under churn only as many buffers fill as threads run at once)
// instead of a new one, and appends after the marker. So the number of buffers is at most
// max(AIPROF_THREAD_BUFFERS, threads recording at once), whatever the thread
// churn; the writer cuts each buffer's events into one track per thread at
// the markers.
//   record mode: a linked list of chunks (64 KiB, doubling to 1 MiB); every
//                event is kept until the process exits.
//   ring mode:   one ring of capacity = AIPROF_RING_MB MiB / 16 bytes events,
//                reserved up front and populated 64 KiB at a time as the first
//                lap reaches it; the newest `capacity` events are kept.
// A writer (aiprof_flush, exit, the flush signal) reads committed counts with
// acquire loads; record chunks are immutable once written, ring contents are
// copied and re-checked against the count (a seqlock in reverse).
//
// Fork: pthread_atfork holds the locks across fork() (not the writer's); the child drops every
// inherited buffer, restarts step numbering, and writes its own file.
//
// Spill (record mode): the chunks are carved out of `<output>.part`, a file
// mapped shared (layout in event_stream.h), so what was recorded is on disk
// however the process ends; every name an event points to is journaled there
// the first time a buffer sees its address (a 256-entry cache per buffer
// keeps that off the hot path). A normal exit writes the event file and
// removes the spill file.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <new>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define AIPROF_HAVE_TSC 1
#endif

#define AIPROF_NO_INLINE_CHECK  // this file defines the functions
#include "aiprof/aiprof.h"
#include "src/sdk/sdk_internal.h"

// Starts non-zero so that a call before initialisation reaches the slow path,
// which initialises; after Init() it is the single hot-path check (also
// tested inline by the header's macros). Written with relaxed atomics.
unsigned char aiprof_active_ = 1;

namespace aiprof::sdkrt {
namespace {

constexpr size_t kFirstChunkBytes = 64 << 10;
constexpr size_t kMaxChunkBytes = 1 << 20;
constexpr size_t kRingPopulateBytes = 64 << 10;
constexpr size_t kGapChunkBytes = 64 << 10;        // the reader walks the spill file in 64 KiB steps
constexpr uint64_t kSpillWindowBytes = 256 << 20;  // address space for spill chunks (each at most 1 MiB)
constexpr double kDefaultRingMb = 8;
constexpr uint32_t kDefaultThreadBuffers = 32;
constexpr int kMaxNameEvents = 8;  // kThreadName events: 64 bytes of name

enum class Mode : uint8_t { kRecord, kRing, kOff };

// Record-mode chunk: header (the spill file's chunk header, event_stream.h),
// then events.
struct Chunk {
  std::atomic<Chunk*> next;
  uint64_t capacity;  // events (names chunks: payload bytes)
  uint32_t magic;     // kSpillChunkMagic when the chunk is in the spill file
  uint32_t kind;
  uint32_t buffer;
  uint32_t seq;
  uint64_t bytes;
  int64_t owner_tid;
  char owner_name[64];
  uint64_t reserved[2];
  Event* events() { return reinterpret_cast<Event*>(this + 1); }
};
static_assert(sizeof(Chunk) == sizeof(SpillChunk), "a chunk's header is the spill file's chunk header");
static_assert(sizeof(Chunk) % 16 == 0, "chunk header keeps events 16-byte aligned");
constexpr int kNameCacheSlots = 256;

struct ThreadBuffer {
  // Written by the owning thread on every event.
  Event* cur = nullptr;
  Event* end = nullptr;
  std::atomic<uint64_t> committed{0};
  // Record mode.
  Chunk* head = nullptr;
  Chunk* tail = nullptr;
  size_t next_chunk_bytes = kFirstChunkBytes;
  // Ring mode.
  Event* ring = nullptr;
  uint64_t ring_capacity = 0;
  Event* ring_populated_end = nullptr;
  // Identity.
  int64_t tid = 0;
  char name[64] = {};
  bool name_fixed = false;
  std::atomic<bool> exited{false};  // idle: no thread owns it now
  std::atomic<uint64_t> marker_events{0};  // exit-marker events written, for the counts
  ThreadBuffer* next = nullptr;       // registry list
  ThreadBuffer* idle_next = nullptr;  // idle stack (newest exit first)
  uint32_t number = 0;                // the buffer's number in the process (spill chunks)
  uint32_t chunks = 0;                // record chunks made
  // Name addresses already journaled in the spill file (direct-mapped).
  uint64_t name_seen[kNameCacheSlots] = {};
};

struct Config {
  Mode mode = Mode::kRecord;
  double ring_mb = kDefaultRingMb;
  uint64_t ring_capacity = 0;
  char output_template[4096] = {};
  char output_path[4096] = {};
  int flush_signal = 0;
  int32_t rank = -1;
  uint32_t thread_buffers = kDefaultThreadBuffers;
  bool spill = true;  // AIPROF_SPILL=0: record-mode buffers in anonymous memory
};

// The spill file (record mode): under g_spill_mu.
struct Spill {
  bool tried = false;  // opened, or failed to (then anonymous memory)
  int fd = -1;
  uint64_t size = 0;  // bytes of the file handed out
  SpillHeader* header = nullptr;
  char path[4200] = {};
  Chunk* names = nullptr;  // the names chunk being filled
  uint64_t names_used = 0;
  uint64_t* known = nullptr;  // journaled addresses (open addressing, 0 = empty)
  size_t known_cap = 0, known_size = 0;
  uint64_t gap_at = 0;  // offset of the 64 KiB kept for MarkGapLocked; 0 once used (or none)
  char* window = nullptr;                     // address space the chunks are mapped into (SpillMapLocked)
  uint64_t window_start = 0;                  // the file offset it starts at (kSpillWindowBytes of them)
};

pthread_once_t g_once = PTHREAD_ONCE_INIT;
Config g_config;
ClockParams g_clock;
#if AIPROF_HAVE_TSC
uint64_t g_tsc_base = 0;
#endif
int64_t g_mono_base_ns = 0;
bool g_use_tsc = false;

pthread_mutex_t g_registry_mu = PTHREAD_MUTEX_INITIALIZER;  // g_threads
pthread_mutex_t g_flush_mu = PTHREAD_MUTEX_INITIALIZER;     // one writer at a time
pthread_mutex_t g_intern_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t g_spill_mu = PTHREAD_MUTEX_INITIALIZER;  // g_spill; innermost lock
Spill g_spill;
std::atomic<bool> g_spill_on{false};
std::atomic<uint32_t> g_next_buffer{0};
ThreadBuffer* g_threads = nullptr;
ThreadBuffer* g_threads_tail = nullptr;
ThreadBuffer* g_idle = nullptr;  // buffers of exited threads, newest exit first
uint32_t g_buffer_count = 0;  // buffers in g_threads
pthread_key_t g_exit_key;
std::atomic<uint64_t> g_next_request{1};
std::atomic<uint64_t> g_next_step{0};
int g_signal_pipe[2] = {-1, -1};

__thread ThreadBuffer* t_buffer __attribute__((tls_model("initial-exec"))) = nullptr;

inline uint64_t ReadTicks() {
#if AIPROF_HAVE_TSC
  if (__builtin_expect(g_use_tsc, 1)) return __rdtsc() - g_tsc_base;
#endif
  return static_cast<uint64_t>(MonotonicNs() - g_mono_base_ns);
}

#if AIPROF_HAVE_TSC
bool HasInvariantTsc() {
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  if (!(d & (1u << 8))) return false;
  // The kernel drops the TSC as clocksource when it finds it unreliable.
  char source[32] = {};
  int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  ssize_t n = read(fd, source, sizeof(source) - 1);
  close(fd);
  return n >= 3 && strncmp(source, "tsc", 3) == 0;
}

// A (tsc, monotonic ns) pair read as close together as possible.
void PairedRead(uint64_t* tsc, int64_t* ns) {
  uint64_t best_width = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    uint64_t t0 = __rdtsc();
    int64_t m = MonotonicNs();
    uint64_t t1 = __rdtsc();
    if (t1 - t0 < best_width) {
      best_width = t1 - t0;
      *tsc = t0 + (t1 - t0) / 2;
      *ns = m;
    }
  }
}
#endif

// Ticks -> ns, from the base pair and a pair read now (at least 20 ms apart:
// the pairing error is tens of ns, so the rate is good to a few ppm).
void Calibrate() {
#if AIPROF_HAVE_TSC
  if (!g_use_tsc) {
    g_clock = ClockParams{false, g_mono_base_ns, 1.0, 1ull << 32};
    return;
  }
  uint64_t tsc = 0;
  int64_t ns = 0;
  PairedRead(&tsc, &ns);
  if (ns - g_mono_base_ns < 20000000) {
    timespec rest{0, static_cast<long>(20000000 - (ns - g_mono_base_ns))};
    nanosleep(&rest, nullptr);
    PairedRead(&tsc, &ns);
  }
  double ticks = static_cast<double>(tsc - g_tsc_base);
  double ns_per_tick = ticks > 0 ? static_cast<double>(ns - g_mono_base_ns) / ticks : 1.0;
  g_clock.tsc = true;
  g_clock.base_ns = g_mono_base_ns;
  g_clock.ns_per_tick = ns_per_tick;
  g_clock.mult = static_cast<uint64_t>(ns_per_tick * 4294967296.0 + 0.5);
#else
  g_clock = ClockParams{false, g_mono_base_ns, 1.0, 1ull << 32};
#endif
}

// --- Configuration ----------------------------------------------------------

bool EnvIs(const char* name, const char* value) {
  const char* v = getenv(name);
  return v && strcmp(v, value) == 0;
}

int ParseSignal(const char* s) {
  if (!s || !*s) return 0;
  if (strncmp(s, "SIG", 3) == 0) s += 3;
  if (strcmp(s, "USR1") == 0) return SIGUSR1;
  if (strcmp(s, "USR2") == 0) return SIGUSR2;
  if (strcmp(s, "HUP") == 0) return SIGHUP;
  if (strcmp(s, "PROF") == 0) return SIGPROF;
  char* end = nullptr;
  long n = strtol(s, &end, 10);
  if (*end == '\0' && n > 0 && n < NSIG && n != SIGKILL && n != SIGSTOP) return static_cast<int>(n);
  return 0;
}

bool IsDirectory(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// Appends `s` to out[0..cap) at *len; false when it does not fit.
bool Append(char* out, size_t cap, size_t* len, const char* s) {
  size_t n = strlen(s);
  if (*len + n + 1 > cap) return false;
  memcpy(out + *len, s, n + 1);
  *len += n;
  return true;
}

// The output path for process `pid` from AIPROF_OUTPUT's template: "%p" is
// the pid; a directory (existing, or written with a trailing '/') holds
// aiprof-<pid>.aiprof; a fork()ed child given a plain file name writes
// <name>-<pid>.aiprof beside it so it never replaces its parent's file.
void ResolveOutput(bool forked_child) {
  char pid[32];
  snprintf(pid, sizeof(pid), "%ld", static_cast<long>(getpid()));
  const char* t = g_config.output_template;
  char path[4096];
  size_t len = 0;
  bool had_pid = false;
  path[0] = '\0';
  if (!*t) {
    char cwd[3072];
    if (!getcwd(cwd, sizeof(cwd))) strcpy(cwd, ".");
    snprintf(path, sizeof(path), "%s/aiprof-%s.aiprof", cwd, pid);
    memcpy(g_config.output_path, path, sizeof(path));
    return;
  }
  for (const char* p = t; *p && len + 32 < sizeof(path); ++p) {
    if (p[0] == '%' && p[1] == 'p') {
      Append(path, sizeof(path), &len, pid);
      had_pid = true;
      ++p;
    } else {
      path[len++] = *p;
      path[len] = '\0';
    }
  }
  bool trailing_slash = len > 0 && path[len - 1] == '/';
  if (trailing_slash) mkdir(path, 0777);
  if (trailing_slash || IsDirectory(path)) {
    if (!trailing_slash) Append(path, sizeof(path), &len, "/");
    Append(path, sizeof(path), &len, "aiprof-");
    Append(path, sizeof(path), &len, pid);
    Append(path, sizeof(path), &len, ".aiprof");
  } else if (forked_child && !had_pid) {
    size_t stem = len;
    if (len > 7 && strcmp(path + len - 7, ".aiprof") == 0) stem = len - 7;
    path[stem] = '\0';
    len = stem;
    Append(path, sizeof(path), &len, "-");
    Append(path, sizeof(path), &len, pid);
    Append(path, sizeof(path), &len, ".aiprof");
  }
  memcpy(g_config.output_path, path, sizeof(path));
}

void ReadConfig() {
  const char* mode = getenv("AIPROF_MODE");
  if (mode && strcmp(mode, "ring") == 0) g_config.mode = Mode::kRing;
  if (mode && strcmp(mode, "off") == 0) g_config.mode = Mode::kOff;
  if (mode && *mode && strcmp(mode, "record") != 0 && strcmp(mode, "ring") != 0 && strcmp(mode, "off") != 0) {
    fprintf(stderr, "aiprof: AIPROF_MODE=%s is not record, ring or off; recording everything\n", mode);
  }
  if (EnvIs("AIPROF_ENABLE", "0")) g_config.mode = Mode::kOff;
  if (const char* mb = getenv("AIPROF_RING_MB"); mb && *mb) {
    char* end = nullptr;
    double v = strtod(mb, &end);
    if (*end == '\0' && v > 0 && v < 1e6) {
      g_config.ring_mb = v;
    } else {
      fprintf(stderr, "aiprof: AIPROF_RING_MB=%s is not a positive number of MiB; using %g\n", mb, kDefaultRingMb);
    }
  }
  g_config.ring_capacity = static_cast<uint64_t>(g_config.ring_mb * 1048576.0) / sizeof(Event);
  if (g_config.ring_capacity < 2) g_config.ring_capacity = 2;
  // A relative AIPROF_OUTPUT is taken from the working directory at start.
  if (const char* out = getenv("AIPROF_OUTPUT"); out && *out) {
    char cwd[2048];
    if (out[0] != '/' && getcwd(cwd, sizeof(cwd))) {
      snprintf(g_config.output_template, sizeof(g_config.output_template), "%s/%s", cwd, out);
    } else {
      snprintf(g_config.output_template, sizeof(g_config.output_template), "%s", out);
    }
  }
  g_config.flush_signal = ParseSignal(getenv("AIPROF_FLUSH_SIGNAL"));
  if (const char* n = getenv("AIPROF_THREAD_BUFFERS"); n && *n) {
    char* end = nullptr;
    long v = strtol(n, &end, 10);
    if (*end == '\0' && v >= 1 && v <= 1000000) {
      g_config.thread_buffers = static_cast<uint32_t>(v);
    } else {
      fprintf(stderr, "aiprof: AIPROF_THREAD_BUFFERS=%s is not a number from 1 to 1000000; using %u\n", n,
              kDefaultThreadBuffers);
    }
  }
  if (EnvIs("AIPROF_SPILL", "0")) g_config.spill = false;
  const char* rank = getenv("RANK");
  if (!rank) rank = getenv("OMPI_COMM_WORLD_RANK");
  if (!rank) rank = getenv("PMI_RANK");
  if (rank && *rank) g_config.rank = static_cast<int32_t>(strtol(rank, nullptr, 10));
}

// --- Buffers ------------------------------------------------------------------

void* MapPopulated(void* at, size_t bytes) {
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | (at ? MAP_FIXED : 0);
  void* p = mmap(at, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// --- The spill file ---------------------------------------------------------------

// Stores the clock's rate in the spill header (slow paths only: a new
// chunk). The rate comes from the base pair and one read now, at least 1 ms
// apart (a process that records within 1 ms of loading the SDK waits out the
// rest once); later chunks refine it.
void SpillCalibrateLocked() {
  SpillHeader* h = g_spill.header;
  if (!h) return;
#if AIPROF_HAVE_TSC
  if (g_use_tsc) {
    uint64_t tsc = 0;
    int64_t ns = 0;
    PairedRead(&tsc, &ns);
    while (ns - g_mono_base_ns < 1000000) {
      if (__atomic_load_n(&h->mult, __ATOMIC_RELAXED) != 0) return;  // calibrated; refine later
      PairedRead(&tsc, &ns);
    }
    double ticks = static_cast<double>(tsc - g_tsc_base);
    double ns_per_tick = ticks > 0 ? static_cast<double>(ns - g_mono_base_ns) / ticks : 1.0;
    h->ns_per_tick = ns_per_tick;
    __atomic_store_n(&h->mult, static_cast<uint64_t>(ns_per_tick * 4294967296.0 + 0.5), __ATOMIC_RELEASE);
    return;
  }
#endif
  h->ns_per_tick = 1.0;
  __atomic_store_n(&h->mult, 1ull << 32, __ATOMIC_RELEASE);
}

// Opens `<output>.part` once per process (under g_spill_mu); false when
// spilling is off or the file cannot be made (then memory is anonymous).
bool SpillOpenLocked() {
  if (g_spill.tried) return g_spill.fd >= 0;
  g_spill.tried = true;
  if (!g_config.spill || g_config.mode != Mode::kRecord) return false;
  if (snprintf(g_spill.path, sizeof(g_spill.path), "%s.part", g_config.output_path) >= static_cast<int>(sizeof(g_spill.path))) {
    return false;
  }
  mode_t mask = umask(0);
  umask(mask);
  int fd = open(g_spill.path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666 & ~mask);
  if (fd < 0) return false;
  void* mem = MAP_FAILED;
  if (posix_fallocate(fd, 0, kSpillHeaderBytes) == 0) {
    mem = mmap(nullptr, kSpillHeaderBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  if (mem == MAP_FAILED) {
    close(fd);
    unlink(g_spill.path);
    return false;
  }
  SpillHeader* h = static_cast<SpillHeader*>(mem);
  h->version = kSpillVersion;
  h->bytes_per_event = sizeof(Event);
  h->pid = getpid();
  h->rank = g_config.rank;
  h->tsc = g_use_tsc ? 1 : 0;
  h->base_ns = g_mono_base_ns;
  int comm = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (comm >= 0) {
    ssize_t n = read(comm, h->process_name, sizeof(h->process_name) - 1);
    close(comm);
    if (n > 0 && h->process_name[n - 1] == '\n') h->process_name[n - 1] = '\0';
  }
  memcpy(h->magic, kSpillMagic, sizeof(kSpillMagic));
  g_spill.fd = fd;
  g_spill.header = h;
  g_spill.size = kSpillHeaderBytes;
  // 64 KiB kept for the chunk that tells the reader a buffer's chunks went on
  // in memory (MarkGapLocked); zero, so the reader skips it until then.
  if (posix_fallocate(fd, static_cast<off_t>(g_spill.size), kGapChunkBytes) == 0) {
    g_spill.gap_at = g_spill.size;
    g_spill.size += kGapChunkBytes;
  }
  SpillCalibrateLocked();
  g_spill_on.store(true, std::memory_order_release);
  return true;
}

// The part of the current window no chunk took (PROT_NONE address space).
void SpillWindowTailUnmapLocked() {
  if (!g_spill.window) return;
  const uint64_t used = g_spill.size - g_spill.window_start;
  if (used < kSpillWindowBytes) munmap(g_spill.window + used, kSpillWindowBytes - used);
  g_spill.window = nullptr;
}

// `bytes` (a multiple of 64 KiB) of the spill file, mapped shared, or null
// (no spill file, or the disk is full: the caller takes anonymous memory).
// Under g_spill_mu. The blocks are allocated first (posix_fallocate), so a
// full disk is found here and never as a SIGBUS on the hot path.
//
// Chunks are mapped side by side, in file order, into a reserved window of
// address space (kSpillWindowBytes), so the kernel merges them into one
// mapping per window. Mapped wherever mmap chose, each chunk was a mapping
// of its own: a process has at most vm.max_map_count of them (65,530 by
// default), so a long run in record mode (one per MiB recorded: 64 GB)
// made every later mmap of the process fail, its own allocations included.
void* SpillMapLocked(size_t bytes) {
  if (!SpillOpenLocked()) return nullptr;
  if (posix_fallocate(g_spill.fd, static_cast<off_t>(g_spill.size), static_cast<off_t>(bytes)) != 0) return nullptr;
  if (!g_spill.window || g_spill.size + bytes > g_spill.window_start + kSpillWindowBytes) {
    SpillWindowTailUnmapLocked();
    void* w = bytes <= kSpillWindowBytes
                  ? mmap(nullptr, kSpillWindowBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                  : MAP_FAILED;
    g_spill.window = w == MAP_FAILED ? nullptr : static_cast<char*>(w);
    g_spill.window_start = g_spill.size;
  }
  void* mem = MAP_FAILED;
  if (g_spill.window) {
    mem = mmap(g_spill.window + (g_spill.size - g_spill.window_start), bytes, PROT_READ | PROT_WRITE,
               MAP_SHARED | MAP_FIXED, g_spill.fd, static_cast<off_t>(g_spill.size));
  } else {  // no address space for a window: a mapping of its own, as before
    mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, g_spill.fd, static_cast<off_t>(g_spill.size));
  }
  g_spill.size += bytes;  // a region left unused stays zero: the reader skips it
  SpillCalibrateLocked();
  return mem == MAP_FAILED ? nullptr : mem;
}

// Faults every page in for writing, so the hot path never takes a fault (a
// shared file mapping is not write-populated by MAP_POPULATE): one
// madvise(MADV_POPULATE_WRITE) (Linux 5.14+), else a store per page.
void TouchPages(void* mem, size_t bytes) {
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
  if (madvise(mem, bytes, MADV_POPULATE_WRITE) == 0) return;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t at = 0; at < bytes; at += page) {
    __atomic_store_n(static_cast<char*>(mem) + at, 0, __ATOMIC_RELAXED);
  }
}

void InitChunk(Chunk* c, size_t bytes, bool in_file, uint32_t kind, uint32_t buffer, uint32_t seq) {
  c->next.store(nullptr, std::memory_order_relaxed);
  c->capacity = kind == kSpillNames ? bytes - sizeof(Chunk) : (bytes - sizeof(Chunk)) / sizeof(Event);
  c->kind = kind;
  c->buffer = buffer;
  c->seq = seq;
  c->bytes = bytes;
  __atomic_store_n(&c->magic, in_file ? kSpillChunkMagic : 0u, __ATOMIC_RELEASE);
}

// A chunk of the buffer `tb` went to anonymous memory (the disk is full):
// once per process, a chunk with no events and the sequence number after
// it goes into the space kept at the start, so the reader sees the gap in
// that buffer's sequence and says the spill file is incomplete
// (sdk_spill_incomplete) instead of ending the buffer there as if the
// process had stopped recording. Before, a process that filled the disk and
// went on recording left a spill file that read as complete, with every
// event after the disk filled missing. Under g_spill_mu.
void MarkGapLocked(const ThreadBuffer* tb, uint32_t anonymous_seq) {
  if (g_spill.fd < 0 || g_spill.gap_at == 0) return;
  void* mem =
      mmap(nullptr, kGapChunkBytes, PROT_READ | PROT_WRITE, MAP_SHARED, g_spill.fd, static_cast<off_t>(g_spill.gap_at));
  g_spill.gap_at = 0;  // one mark per process: the reader's diagnostic needs one
  if (mem == MAP_FAILED) return;
  Chunk* c = static_cast<Chunk*>(mem);
  c->owner_tid = tb->tid;
  memcpy(c->owner_name, tb->name, sizeof(c->owner_name));
  InitChunk(c, kGapChunkBytes, true, kSpillEvents, tb->number, anonymous_seq + 1);
  munmap(mem, kGapChunkBytes);
}

Chunk* NewChunk(ThreadBuffer* tb) {
  size_t bytes = tb->next_chunk_bytes;
  pthread_mutex_lock(&g_spill_mu);
  void* mem = SpillMapLocked(bytes);
  if (!mem) MarkGapLocked(tb, tb->chunks);
  pthread_mutex_unlock(&g_spill_mu);
  const bool in_file = mem != nullptr;
  if (in_file) {
    TouchPages(mem, bytes);
  } else {
    mem = MapPopulated(nullptr, bytes);
  }
  if (!mem) return nullptr;
  if (tb->next_chunk_bytes < kMaxChunkBytes) tb->next_chunk_bytes *= 2;
  Chunk* c = static_cast<Chunk*>(mem);
  InitChunk(c, bytes, in_file, kSpillEvents, tb->number, tb->chunks++);
  return c;
}

// The buffer's owner, in its first chunk (the spill file's reader names the
// events after the buffer's last exit marker by it).
void SetOwner(ThreadBuffer* tb) {
  if (!tb->head) return;
  tb->head->owner_tid = tb->tid;
  memcpy(tb->head->owner_name, tb->name, sizeof(tb->head->owner_name));
}

bool KnownInsertLocked(uint64_t p) {
  if ((g_spill.known_size + 1) * 2 > g_spill.known_cap) {
    size_t cap = g_spill.known_cap ? g_spill.known_cap * 2 : 1024;
    uint64_t* table = static_cast<uint64_t*>(calloc(cap, sizeof(uint64_t)));
    if (!table) return false;
    for (size_t i = 0; i < g_spill.known_cap; ++i) {
      uint64_t k = g_spill.known[i];
      if (!k) continue;
      size_t j = (k * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
      while (table[j]) j = (j + 1) & (cap - 1);
      table[j] = k;
    }
    free(g_spill.known);
    g_spill.known = table;
    g_spill.known_cap = cap;
  }
  size_t j = (p * 0x9E3779B97F4A7C15ull >> 20) & (g_spill.known_cap - 1);
  for (; g_spill.known[j]; j = (j + 1) & (g_spill.known_cap - 1)) {
    if (g_spill.known[j] == p) return false;  // already journaled
  }
  g_spill.known[j] = p;
  ++g_spill.known_size;
  return true;
}

// Journals the name at address `p` in the spill file (once per process),
// before the event that points to it is written. Reached when the buffer's
// name cache misses.
__attribute__((noinline)) void NoteName(ThreadBuffer* tb, uint64_t p) {
  if (g_spill_on.load(std::memory_order_acquire)) {
    pthread_mutex_lock(&g_spill_mu);
    if (g_spill.fd >= 0 && KnownInsertLocked(p)) {
      const char* text = reinterpret_cast<const char*>(static_cast<uintptr_t>(p));
      const uint64_t len = strnlen(text, 65536);
      const uint64_t need = 16 + ((len + 7) & ~7ull);
      if (!g_spill.names || g_spill.names_used + need > g_spill.names->capacity) {
        size_t bytes = (sizeof(Chunk) + need + kFirstChunkBytes - 1) / kFirstChunkBytes * kFirstChunkBytes;
        void* mem = SpillMapLocked(bytes);
        if (mem) {
          TouchPages(mem, bytes);
          g_spill.names = static_cast<Chunk*>(mem);
          InitChunk(g_spill.names, bytes, true, kSpillNames, 0, 0);
          g_spill.names_used = 0;
        }
      }
      if (g_spill.names && g_spill.names_used + need <= g_spill.names->capacity) {
        char* rec = reinterpret_cast<char*>(g_spill.names + 1) + g_spill.names_used;
        memcpy(rec + 16, text, len);
        memcpy(rec + 8, &len, 8);
        __atomic_store_n(reinterpret_cast<uint64_t*>(rec), p, __ATOMIC_RELEASE);
        g_spill.names_used += need;
      }
    }
    pthread_mutex_unlock(&g_spill_mu);
  }
  tb->name_seen[(p * 0x9E3779B97F4A7C15ull) >> 56] = p;
}

inline void SeeName(ThreadBuffer* tb, uint64_t p) {
  if (__builtin_expect(tb->name_seen[(p * 0x9E3779B97F4A7C15ull) >> 56] != p, 0)) NoteName(tb, p);
}

size_t RingBytes(uint64_t capacity) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t bytes = capacity * sizeof(Event);
  return (bytes + page - 1) / page * page;
}

// Reached when the thread's current chunk (or populated ring part) is full:
// record mode links a new chunk; ring mode populates the next part of the
// first lap, or wraps. Returns the slot to write, or null (out of memory:
// the event is dropped).
__attribute__((noinline)) Event* Refill(ThreadBuffer* tb) {
  if (tb->ring) {
    Event* ring_end = tb->ring + tb->ring_capacity;
    if (tb->cur == ring_end) {
      tb->cur = tb->ring;
      tb->end = tb->ring_populated_end;
      return tb->cur;
    }
    // First lap: fault in the next part.
    char* from = reinterpret_cast<char*>(tb->ring_populated_end);
    char* limit = reinterpret_cast<char*>(tb->ring) + RingBytes(tb->ring_capacity);
    size_t bytes = static_cast<size_t>(limit - from) < kRingPopulateBytes ? static_cast<size_t>(limit - from)
                                                                          : kRingPopulateBytes;
    if (bytes == 0 || !MapPopulated(from, bytes)) return nullptr;
    Event* populated = reinterpret_cast<Event*>(from + bytes);
    tb->ring_populated_end = populated < ring_end ? populated : ring_end;
    tb->end = tb->ring_populated_end;
    return tb->cur;
  }
  Chunk* c = NewChunk(tb);
  if (!c) return nullptr;
  tb->tail->next.store(c, std::memory_order_release);
  tb->tail = c;
  tb->cur = c->events();
  tb->end = tb->cur + c->capacity;
  return tb->cur;
}

// An event's payload is stored before its head (the head with a release
// store: a plain mov on x86, which keeps stores in order), so in the spill
// file a non-zero head means a whole event, whenever the process stops.
inline void Store(Event* e, uint64_t head, uint64_t payload) {
  e->payload = payload;
  __atomic_store_n(&e->head, head, __ATOMIC_RELEASE);
}

inline Event* Slot(ThreadBuffer* tb) {
  Event* e = tb->cur;
  if (__builtin_expect(e == tb->end, 0)) e = Refill(tb);
  return e;
}

// Appends the exit marker (kThreadExit with the tid, then the name in
// kThreadName events) and commits it. False when not even the kThreadExit
// fits (out of memory): the buffer then stays this thread's for good.
bool WriteExitMarker(ThreadBuffer* tb) {
  Event* e = Slot(tb);
  if (!e) return false;
  Store(e, (ReadTicks() << kTypeBits) | kThreadExit, static_cast<uint64_t>(tb->tid));
  tb->cur = e + 1;
  uint64_t written = 1;
  size_t len = strnlen(tb->name, sizeof(tb->name) - 1);
  for (size_t at = 0; at < len && written <= kMaxNameEvents; at += 8) {
    Event* x = Slot(tb);
    if (!x) break;  // a shorter name, still a whole marker
    uint64_t bytes = 0;
    memcpy(&bytes, tb->name + at, len - at < 8 ? len - at : 8);
    Store(x, kThreadName, bytes);
    tb->cur = x + 1;
    ++written;
  }
  tb->marker_events.store(tb->marker_events.load(std::memory_order_relaxed) + written, std::memory_order_relaxed);
  tb->committed.store(tb->committed.load(std::memory_order_relaxed) + written, std::memory_order_release);
  return true;
}

// The pthread key's destructor: the thread is exiting. Its buffer, marked
// with who wrote it, joins the idle queue.
void OnThreadExit(void* arg) {
  ThreadBuffer* tb = static_cast<ThreadBuffer*>(arg);
  if (!tb->name_fixed) pthread_getname_np(pthread_self(), tb->name, sizeof(tb->name));
  t_buffer = nullptr;  // an SDK call from a later destructor registers anew
  bool marked = WriteExitMarker(tb);
  pthread_mutex_lock(&g_registry_mu);
  tb->exited.store(true, std::memory_order_release);
  if (marked) {
    tb->idle_next = g_idle;
    g_idle = tb;
  }
  pthread_mutex_unlock(&g_registry_mu);
}

// Under g_registry_mu: the buffer that went idle last, once the process has
// its AIPROF_THREAD_BUFFERS buffers; else null (a new one is made).
ThreadBuffer* TakeIdleBuffer() {
  if (g_buffer_count < g_config.thread_buffers || !g_idle) return nullptr;
  ThreadBuffer* tb = g_idle;
  g_idle = tb->idle_next;
  tb->idle_next = nullptr;
  return tb;
}

// Under g_registry_mu: the calling thread becomes the buffer's owner.
void AdoptBuffer(ThreadBuffer* tb) {
  tb->tid = static_cast<int64_t>(syscall(SYS_gettid));
  memset(tb->name, 0, sizeof(tb->name));
  pthread_getname_np(pthread_self(), tb->name, sizeof(tb->name));
  tb->name_fixed = false;
  tb->exited.store(false, std::memory_order_release);
  SetOwner(tb);
}

void Init();

__attribute__((noinline)) ThreadBuffer* RegisterThread() {
  pthread_once(&g_once, &Init);
  if (!__atomic_load_n(&aiprof_active_, __ATOMIC_RELAXED)) return nullptr;
  pthread_mutex_lock(&g_registry_mu);
  ThreadBuffer* tb = TakeIdleBuffer();
  if (tb) AdoptBuffer(tb);
  pthread_mutex_unlock(&g_registry_mu);
  if (tb) {
    pthread_setspecific(g_exit_key, tb);
    t_buffer = tb;
    return tb;
  }
  tb = static_cast<ThreadBuffer*>(calloc(1, sizeof(ThreadBuffer)));
  if (!tb) return nullptr;
  new (tb) ThreadBuffer();
  tb->number = g_next_buffer.fetch_add(1, std::memory_order_relaxed);
  tb->tid = static_cast<int64_t>(syscall(SYS_gettid));
  pthread_getname_np(pthread_self(), tb->name, sizeof(tb->name));
  if (g_config.mode == Mode::kRing) {
    tb->ring_capacity = g_config.ring_capacity;
    void* mem = mmap(nullptr, RingBytes(tb->ring_capacity), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
      free(tb);
      return nullptr;
    }
    tb->ring = static_cast<Event*>(mem);
    tb->ring_populated_end = tb->ring;
    tb->cur = tb->end = tb->ring;
  } else {
    Chunk* c = NewChunk(tb);
    if (!c) {
      free(tb);
      return nullptr;
    }
    tb->head = tb->tail = c;
    tb->cur = c->events();
    tb->end = tb->cur + c->capacity;
    SetOwner(tb);
  }
  pthread_mutex_lock(&g_registry_mu);
  if (g_threads_tail) {
    g_threads_tail->next = tb;
  } else {
    g_threads = tb;
  }
  g_threads_tail = tb;
  ++g_buffer_count;
  pthread_mutex_unlock(&g_registry_mu);
  pthread_setspecific(g_exit_key, tb);
  t_buffer = tb;
  return tb;
}

inline bool Enabled() { return __atomic_load_n(&aiprof_active_, __ATOMIC_RELAXED); }

// The calling thread's buffer, registering the thread on its first event.
inline ThreadBuffer* Buffer() {
  ThreadBuffer* tb = t_buffer;
  if (__builtin_expect(tb == nullptr, 0)) tb = RegisterThread();
  return tb;
}

// The entry points test Enabled() themselves and tail-call these, so the
// disabled path is a load, a test and a return with no stack frame.
__attribute__((noinline)) void Emit(uint8_t type, uint64_t payload) {
  ThreadBuffer* tb = Buffer();
  if (!tb) return;
  Event* e = Slot(tb);
  if (!e) return;
  Store(e, (ReadTicks() << kTypeBits) | type, payload);
  tb->cur = e + 1;
  tb->committed.store(tb->committed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

// An event followed by a count (kExtCount): both committed at once.
__attribute__((noinline)) void EmitCount(uint8_t type, uint64_t payload, uint64_t count) {
  ThreadBuffer* tb = Buffer();
  if (!tb) return;
  Event* e = Slot(tb);
  if (!e) return;
  Store(e, (ReadTicks() << kTypeBits) | type, payload);
  tb->cur = e + 1;
  Event* x = Slot(tb);
  if (!x) {
    tb->cur = e;  // keep the pair whole: drop both
    return;
  }
  Store(x, kExtCount, count);
  tb->cur = x + 1;
  tb->committed.store(tb->committed.load(std::memory_order_relaxed) + 2, std::memory_order_release);
}

inline uint64_t NamePayload(const char* name) { return reinterpret_cast<uintptr_t>(name ? name : ""); }

// An event whose payload is a name (span, node, mark): the name is
// journaled first when the buffer has not seen its address.
__attribute__((noinline)) void EmitName(uint8_t type, const char* name) {
  ThreadBuffer* tb = Buffer();
  if (!tb) return;
  const uint64_t payload = NamePayload(name);
  SeeName(tb, payload);
  Event* e = Slot(tb);
  if (!e) return;
  Store(e, (ReadTicks() << kTypeBits) | type, payload);
  tb->cur = e + 1;
  tb->committed.store(tb->committed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

// An event followed by its name: both committed at once.
__attribute__((noinline)) void EmitNamed(uint8_t type, uint64_t payload, const char* name) {
  ThreadBuffer* tb = Buffer();
  if (!tb) return;
  const uint64_t name_payload = NamePayload(name);
  SeeName(tb, name_payload);
  Event* e = Slot(tb);
  if (!e) return;
  Store(e, (ReadTicks() << kTypeBits) | type, payload);
  tb->cur = e + 1;
  Event* x = Slot(tb);
  if (!x) {
    tb->cur = e;  // keep the pair whole: drop both
    return;
  }
  Store(x, kExtName, name_payload);
  tb->cur = x + 1;
  tb->committed.store(tb->committed.load(std::memory_order_relaxed) + 2, std::memory_order_release);
}

// --- Writing ------------------------------------------------------------------

// Every thread's events, as the writer gets them: views point into `runs`
// (fixed up once all are known) and into record chunks or ring copies.
struct Snapshot {
  Vec<ThreadView> views;
  Vec<size_t> first_run;  // per view, its first entry in `runs`
  Vec<EventRun> runs;
  Vec<Event*> copies;  // ring copies, freed after the write
  ~Snapshot() {
    for (Event* c : copies) free(c);
  }
};

// A buffer as the writer found it under the registry lock: its owner (tid,
// name) and its committed count then. The events are read after the lock
// is released (a thread that starts or exits meanwhile does not wait for
// the copies): buffers are never freed in a running process, an owner
// that changes later only appends events after `committed`, and ring
// copies are re-checked against the count as they always were.
struct BufferState {
  ThreadBuffer* tb;
  uint64_t committed;
  uint64_t markers;  // exit-marker events written by then
  int64_t tid;
  char name[64];
  bool name_fixed;
  bool own;    // the writer's own thread
  bool quiet;  // no thread records into it (exited, or the writer's own)
};

// Under g_registry_mu.
BufferState CaptureBuffer(ThreadBuffer* tb) {
  BufferState st;
  st.tb = tb;
  st.committed = tb->committed.load(std::memory_order_acquire);
  st.markers = tb->marker_events.load(std::memory_order_relaxed);
  st.tid = tb->tid;
  memcpy(st.name, tb->name, sizeof(st.name));
  st.name_fixed = tb->name_fixed;
  st.own = tb == t_buffer;
  st.quiet = tb->exited.load(std::memory_order_acquire) || st.own;
  return st;
}

// The name the owning thread has now: its own, or /proc's for another live
// thread whose name the SDK was not told.
void CurrentName(const BufferState& st, char* out) {
  memcpy(out, st.name, sizeof(st.name));
  if (st.name_fixed) return;
  if (st.own) {
    pthread_getname_np(pthread_self(), out, 64);
    return;
  }
  if (st.quiet) return;
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", static_cast<long>(st.tid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char comm[64] = {};
  ssize_t n = read(fd, comm, sizeof(comm) - 1);
  close(fd);
  if (n > 0 && comm[n - 1] == '\n') comm[n - 1] = '\0';
  if (n > 0) memcpy(out, comm, sizeof(comm));
}

// The buffer's committed events as runs, oldest first, in `*out`. Ring
// contents are copied and re-checked: events the owner may have overwritten
// while they were copied are left out. Returns the number left out (ring
// mode: older events no longer held).
uint64_t BufferRuns(const BufferState& st, Snapshot* snap, Vec<EventRun>* out) {
  ThreadBuffer* tb = st.tb;
  const bool quiet = st.quiet;
  uint64_t n1 = st.committed;
  if (!tb->ring) {
    uint64_t left = n1;
    for (Chunk* c = tb->head; c && left > 0; c = c->next.load(std::memory_order_acquire)) {
      uint64_t take = left < c->capacity ? left : c->capacity;
      out->push_back(EventRun{c->events(), take});
      left -= take;
    }
    return 0;
  }
  uint64_t cap = tb->ring_capacity;
  uint64_t held = n1 < cap ? n1 : cap;
  Event* copy = static_cast<Event*>(malloc((held ? held : 1) * sizeof(Event)));
  if (!copy || !snap->copies.push_back(copy)) {
    free(copy);
    return n1;
  }
  uint64_t first = n1 - held;
  for (uint64_t i = 0; i < held; ++i) copy[i] = tb->ring[(first + i) % cap];
  std::atomic_thread_fence(std::memory_order_acquire);
  uint64_t n2 = tb->committed.load(std::memory_order_acquire);
  // Writes after n1 overwrote events [n1 - cap, n2 - cap]; while the owner
  // runs, the slot of event n2 may be half written too.
  uint64_t valid_from = first;
  if (n2 != n1 || !quiet) {
    uint64_t unsafe_end = n2 + 1 > cap ? n2 + 1 - cap : 0;
    if (unsafe_end > valid_from) valid_from = unsafe_end < n1 ? unsafe_end : n1;
  }
  out->push_back(EventRun{copy + (valid_from - first), n1 - valid_from});
  return valid_from;
}

// Adds a view for the events [from, to) of `runs` (positions as (run, index)).
void AddView(Snapshot* snap, const Vec<EventRun>& runs, size_t from_run, size_t from_k, size_t to_run, size_t to_k,
             int64_t tid, const char* name, uint64_t overwritten) {
  ThreadView view;
  view.tid = tid;
  snprintf(view.name, sizeof(view.name), "%s", name);
  view.overwritten = overwritten;
  view.recorded = overwritten;
  snap->first_run.push_back(snap->runs.size());
  for (size_t r = from_run; r <= to_run && r < runs.size(); ++r) {
    size_t a = r == from_run ? from_k : 0, b = r == to_run ? to_k : runs[r].count;
    if (b <= a) continue;
    snap->runs.push_back(EventRun{runs[r].events + a, b - a});
    view.recorded += b - a;
  }
  snap->views.push_back(view);
}

// One buffer's views: a view per exit marker (the events before it, named
// by it), then the current owner's events after the last marker. Name
// events whose marker was overwritten in the ring are skipped.
void SnapshotBuffer(const BufferState& st, Snapshot* snap) {
  Vec<EventRun> runs;
  uint64_t overwritten = BufferRuns(st, snap, &runs);
  const uint64_t markers = st.markers;
  uint64_t markers_held = 0;
  size_t from_run = 0, from_k = 0, views_before = snap->views.size();
  bool segment_empty = true;
  for (size_t r = 0; r < runs.size(); ++r) {
    for (size_t k = 0; k < runs[r].count; ++k) {
      uint8_t type = TypeOf(runs[r].events[k]);
      markers_held += type == kThreadExit || type == kThreadName;
      if (type == kThreadName && segment_empty) {
        from_run = r;
        from_k = k + 1;
        continue;
      }
      if (type != kThreadExit) {
        segment_empty = false;
        continue;
      }
      char name[kMaxNameEvents * 8 + 1] = {};
      int64_t tid = static_cast<int64_t>(runs[r].events[k].payload);
      size_t end_run = r, end_k = k;
      // The name follows the marker, possibly across runs (record chunks).
      for (int i = 0; i < kMaxNameEvents; ++i) {
        size_t nr = r, nk = k + 1;
        while (nr < runs.size() && nk == runs[nr].count) ++nr, nk = 0;
        if (nr >= runs.size() || TypeOf(runs[nr].events[nk]) != kThreadName) break;
        memcpy(name + i * 8, &runs[nr].events[nk].payload, 8);
        ++markers_held;
        r = nr;
        k = nk;
      }
      AddView(snap, runs, from_run, from_k, end_run, end_k, tid, name, 0);
      from_run = r;
      from_k = k + 1;
      segment_empty = true;
    }
  }
  // The current owner's part: always a view when the buffer had no marker
  // (as before buffers were shared), else only when it holds events.
  if (!segment_empty || snap->views.size() == views_before) {
    char name[64];
    CurrentName(st, name);
    size_t last = runs.empty() ? 0 : runs.size() - 1;
    AddView(snap, runs, from_run, from_k, last, runs.empty() ? 0 : runs[last].count, st.tid, name, 0);
  }
  // The ring's oldest view lost the events before it; exit markers among
  // them are not events the threads recorded.
  const uint64_t markers_lost = markers > markers_held ? markers - markers_held : 0;
  const uint64_t lost = overwritten > markers_lost ? overwritten - markers_lost : 0;
  if (snap->views.size() > views_before) {
    snap->views[views_before].overwritten = lost;
    snap->views[views_before].recorded += lost;
  }
}

int WriteTo(const char* path) {
  pthread_once(&g_once, &Init);
  if (g_config.mode == Mode::kOff) return 0;
  pthread_mutex_lock(&g_flush_mu);
  int err = 0;
  {
    Snapshot snap;
    // Under the registry lock, only each buffer's owner and count
    // (CaptureBuffer); the copies and the walk for exit markers after it, so
    // a thread that starts or exits meanwhile waits for no copy (it waited
    // for every ring's: bench/sdk_registry_wait.py, docs/sdk.md).
    Vec<BufferState> states;
    pthread_mutex_lock(&g_registry_mu);
    for (ThreadBuffer* tb = g_threads; tb; tb = tb->next) states.push_back(CaptureBuffer(tb));
    pthread_mutex_unlock(&g_registry_mu);
    for (const BufferState& st : states) SnapshotBuffer(st, &snap);
    for (size_t i = 0; i < snap.views.size(); ++i) {
      size_t end = i + 1 < snap.views.size() ? snap.first_run[i + 1] : snap.runs.size();
      snap.views[i].runs = snap.runs.data() + snap.first_run[i];
      snap.views[i].run_count = end - snap.first_run[i];
    }
    if (states.failed() || snap.views.failed() || snap.runs.failed() || snap.first_run.failed() ||
        snap.copies.failed()) {
      err = ENOMEM;
    } else {
      Calibrate();
      char process[64] = {};
      int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        ssize_t n = read(fd, process, sizeof(process) - 1);
        close(fd);
        if (n > 0 && process[n - 1] == '\n') process[n - 1] = '\0';
      }
      WriteRequest req;
      req.threads = snap.views.data();
      req.thread_count = snap.views.size();
      req.clock = g_clock;
      req.pid = getpid();
      req.rank = g_config.rank;
      req.process_name = process;
      req.mode = g_config.mode == Mode::kRing ? "ring" : "record";
      req.ring_mb = g_config.mode == Mode::kRing ? g_config.ring_mb : 0;
      err = WriteEventFile(req, path);
    }
  }
  pthread_mutex_unlock(&g_flush_mu);
  return err;
}

int FlushOrReport() {
  int err = WriteTo(g_config.output_path);
  if (err != 0) fprintf(stderr, "aiprof: cannot write %s: %s\n", g_config.output_path, strerror(err));
  return err;
}

// At exit, a process that never recorded an event (a program that links the
// SDK but did not use it) writes no file; aiprof_flush() and the flush signal
// always write.
void AtExit() {
  if (g_config.mode == Mode::kOff) return;
  pthread_mutex_lock(&g_registry_mu);
  bool recorded = g_threads != nullptr;
  pthread_mutex_unlock(&g_registry_mu);
  if (!recorded || FlushOrReport() != 0) return;  // a failed write keeps the spill file
  pthread_mutex_lock(&g_spill_mu);
  if (g_spill.fd >= 0) unlink(g_spill.path);
  pthread_mutex_unlock(&g_spill_mu);
}

// --- Flush on a signal (for an outside process such as aiprof monitor) -------

void OnFlushSignal(int) {
  int saved = errno;
  char b = 'f';
  if (g_signal_pipe[1] >= 0) (void)!write(g_signal_pipe[1], &b, 1);
  errno = saved;
}

void* FlushThreadMain(void*) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  int fd = g_signal_pipe[0];
  char buf[64];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      FlushOrReport();
    } else if (n == 0 || (n < 0 && errno != EINTR)) {
      return nullptr;
    }
  }
}

void StartFlushSignal() {
  if (g_config.flush_signal == 0) return;
  if (pipe2(g_signal_pipe, O_CLOEXEC) != 0) return;
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  // The flush thread never records: it has no buffer and calls no SDK entry.
  if (pthread_create(&thread, &attr, &FlushThreadMain, nullptr) != 0) {
    pthread_attr_destroy(&attr);
    return;
  }
  pthread_attr_destroy(&attr);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = &OnFlushSignal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(g_config.flush_signal, &sa, nullptr);
}

// --- fork ---------------------------------------------------------------------

// The writer's lock is not held across fork(): a fork (a DataLoader
// starting its workers) waited for a whole flush of the parent, seconds for
// a large record. A writer guards nothing the child inherits (its state is
// its own stack and heap, and the buffers it reads, found under the
// registry lock, are the parent's, never freed there); the child, whose only thread is the forking one, gets
// the lock back unlocked (ForkChild).
void ForkPrepare() {
  pthread_mutex_lock(&g_registry_mu);
  pthread_mutex_lock(&g_intern_mu);
  pthread_mutex_lock(&g_spill_mu);
}

void ForkParent() {
  pthread_mutex_unlock(&g_spill_mu);
  pthread_mutex_unlock(&g_intern_mu);
  pthread_mutex_unlock(&g_registry_mu);
}

// In a forked child. The walk stops at the buffer's tail as the fork saw it
// (tb lives in private memory): spill chunks are shared with the parent, so a
// tail's `next` read here may be one the parent's thread linked after the
// fork, to a chunk mapped after it and absent in the child (it crashed the
// child, reading that chunk's header). A chunk linked in the instant before
// the fork but not yet the tail stays mapped in the child (at most 1 MiB).
void FreeBuffer(ThreadBuffer* tb) {
  if (tb->ring) munmap(tb->ring, RingBytes(tb->ring_capacity));
  for (Chunk* c = tb->head; c;) {
    Chunk* next = c == tb->tail ? nullptr : c->next.load(std::memory_order_relaxed);
    munmap(c, c->bytes);
    c = next;
  }
  free(tb);
}

// The child has one thread (this one): drop what the parent recorded.
void ForkChild() {
  for (ThreadBuffer* tb = g_threads; tb;) {
    ThreadBuffer* next = tb->next;
    FreeBuffer(tb);
    tb = next;
  }
  g_threads = g_threads_tail = nullptr;
  g_idle = nullptr;
  g_buffer_count = 0;
  t_buffer = nullptr;
  g_next_step.store(0, std::memory_order_relaxed);
  g_next_buffer.store(0, std::memory_order_relaxed);
  // The parent's spill file stays the parent's: the child makes its own at
  // its first event.
  if (g_spill.fd >= 0) close(g_spill.fd);
  if (g_spill.header) munmap(g_spill.header, kSpillHeaderBytes);
  if (g_spill.names) munmap(g_spill.names, g_spill.names->bytes);
  SpillWindowTailUnmapLocked();
  free(g_spill.known);
  g_spill = Spill();
  g_spill_on.store(false, std::memory_order_relaxed);
  pthread_mutex_unlock(&g_spill_mu);
  pthread_mutex_unlock(&g_intern_mu);
  pthread_mutex_unlock(&g_registry_mu);
  pthread_mutex_init(&g_flush_mu, nullptr);  // a parent's writer may have held it: not here
  if (g_config.mode == Mode::kOff) return;
  ResolveOutput(/*forked_child=*/true);
  if (g_signal_pipe[0] >= 0) {
    close(g_signal_pipe[0]);
    close(g_signal_pipe[1]);
    g_signal_pipe[0] = g_signal_pipe[1] = -1;
    StartFlushSignal();
  }
  LiveForkChild();
}

int WriteToHook(const char* path) { return WriteTo(path); }
const char* ModeHook() { return g_config.mode == Mode::kRing ? "ring" : "record"; }

void Init() {
  ReadConfig();
  if (g_config.mode == Mode::kOff) {
    __atomic_store_n(&aiprof_active_, 0, __ATOMIC_RELAXED);
    return;
  }
#if AIPROF_HAVE_TSC
  g_use_tsc = !EnvIs("AIPROF_CLOCK", "monotonic") && HasInvariantTsc();
  if (g_use_tsc) {
    PairedRead(&g_tsc_base, &g_mono_base_ns);
  } else {
    g_mono_base_ns = MonotonicNs();
  }
#else
  g_mono_base_ns = MonotonicNs();
#endif
  g_clock.base_ns = g_mono_base_ns;
  ResolveOutput(/*forked_child=*/false);
  pthread_key_create(&g_exit_key, &OnThreadExit);
  pthread_atfork(&ForkPrepare, &ForkParent, &ForkChild);
  atexit(&AtExit);
  StartFlushSignal();
  LiveHooks hooks;
  hooks.write_to = &WriteToHook;
  hooks.mode = &ModeHook;
  LiveInit(hooks);
}

__attribute__((constructor)) void InitAtLoad() { pthread_once(&g_once, &Init); }

// --- Interning ----------------------------------------------------------------

struct InternEntry {
  uint64_t hash;
  const char* str;
};
InternEntry* g_intern_table = nullptr;
size_t g_intern_cap = 0, g_intern_size = 0;

bool GrowIntern() {
  size_t cap = g_intern_cap ? g_intern_cap * 2 : 1024;
  InternEntry* table = static_cast<InternEntry*>(calloc(cap, sizeof(InternEntry)));
  if (!table) return false;
  for (size_t i = 0; i < g_intern_cap; ++i) {
    if (!g_intern_table[i].str) continue;
    size_t j = g_intern_table[i].hash & (cap - 1);
    while (table[j].str) j = (j + 1) & (cap - 1);
    table[j] = g_intern_table[i];
  }
  free(g_intern_table);
  g_intern_table = table;
  g_intern_cap = cap;
  return true;
}

}  // namespace

const char* SdkOutputPath() { return g_config.output_path; }

}  // namespace aiprof::sdkrt

using namespace aiprof::sdkrt;  // NOLINT: the C entry points below

extern "C" {

void aiprof_span_begin(const char* name) {
  if (Enabled()) EmitName(kSpanBegin, name);
}
void aiprof_span_end(void) {
  if (Enabled()) Emit(kSpanEnd, 0);
}

void aiprof_iteration_start(void) {
  if (!Enabled()) return;
  if (LiveAttached()) LiveStepStart();
  Emit(kIterStart, g_next_step.fetch_add(1, std::memory_order_relaxed));
}
void aiprof_iteration_end(void) {
  if (!Enabled()) return;
  Emit(kIterEnd, 0);
  if (LiveAttached()) LiveStepEnd();
}

void aiprof_node_begin(const char* node) {
  if (Enabled()) EmitName(kNodeBegin, node);
}
void aiprof_node_end(void) {
  if (Enabled()) Emit(kNodeEnd, 0);
}

uint64_t aiprof_request_begin(const char* name) {
  if (!Enabled()) return 0;
  uint64_t id = g_next_request.fetch_add(1, std::memory_order_relaxed);
  EmitNamed(kRequestBegin, id, name);
  if (LiveAttached()) LiveRequestBegin(id);
  return id;
}

void aiprof_request_end(uint64_t id) {
  if (id == 0 || !Enabled()) return;
  Emit(kRequestEnd, id);
  if (LiveAttached()) LiveRequestEnd(id, false);
}

void aiprof_request_end_error(uint64_t id) {
  if (id == 0 || !Enabled()) return;
  Emit(kRequestEnd, id);
  if (LiveAttached()) LiveRequestEnd(id, true);
}

void aiprof_request_prefill(uint64_t id, uint32_t prompt_tokens) {
  if (id != 0 && Enabled()) EmitCount(kRequestPrefill, id, prompt_tokens);
}

void aiprof_request_token(uint64_t id) {
  if (id != 0 && Enabled()) EmitCount(kRequestTokens, id, 1);
}

void aiprof_request_tokens(uint64_t id, uint32_t n) {
  if (id != 0 && n != 0 && Enabled()) EmitCount(kRequestTokens, id, n);
}

void aiprof_counter(const char* name, double value) {
  if (!Enabled()) return;
  uint64_t bits;
  memcpy(&bits, &value, sizeof(bits));
  EmitNamed(kCounter, bits, name);
  if (LiveAttached()) LiveCounter(name, value);
}

void aiprof_mark(const char* name) {
  if (Enabled()) EmitName(kMark, name);
}

void aiprof_flush(void) {
  pthread_once(&g_once, &Init);
  if (g_config.mode != Mode::kOff) FlushOrReport();
}

int aiprof_flush_to(const char* path) {
  if (!path || !*path) {
    errno = EINVAL;
    return -1;
  }
  int err = WriteTo(path);
  if (err != 0) {
    errno = err;
    return -1;
  }
  return 0;
}

const char* aiprof_intern(const char* s) {
  if (!s) s = "";
  uint64_t h = Fnv1a64(s);
  pthread_mutex_lock(&g_intern_mu);
  const char* found = nullptr;
  if (g_intern_size * 2 >= g_intern_cap && !GrowIntern()) {
    pthread_mutex_unlock(&g_intern_mu);
    return s;  // out of memory: the caller's string, valid at least now
  }
  size_t j = h & (g_intern_cap - 1);
  for (; g_intern_table[j].str; j = (j + 1) & (g_intern_cap - 1)) {
    if (g_intern_table[j].hash == h && strcmp(g_intern_table[j].str, s) == 0) {
      found = g_intern_table[j].str;
      break;
    }
  }
  if (!found) {
    size_t n = strlen(s) + 1;
    char* copy = static_cast<char*>(malloc(n));
    if (copy) {
      memcpy(copy, s, n);
      g_intern_table[j] = InternEntry{h, copy};
      ++g_intern_size;
      found = copy;
    } else {
      found = s;
    }
  }
  pthread_mutex_unlock(&g_intern_mu);
  return found;
}

void aiprof_thread_name(const char* name) {
  ThreadBuffer* tb = Enabled() ? Buffer() : nullptr;
  if (!tb || !name) return;
  snprintf(tb->name, sizeof(tb->name), "%s", name);
  tb->name_fixed = true;
  SetOwner(tb);
}

void aiprof_set_enabled(int on) {
  pthread_once(&g_once, &Init);
  if (g_config.mode != Mode::kOff) __atomic_store_n(&aiprof_active_, on != 0 ? 1 : 0, __ATOMIC_RELAXED);
}

int aiprof_enabled(void) {
  pthread_once(&g_once, &Init);
  return __atomic_load_n(&aiprof_active_, __ATOMIC_RELAXED) != 0 ? 1 : 0;
}

int64_t aiprof_clock_ns(void) { return MonotonicNs(); }

const char* aiprof_output_path(void) {
  pthread_once(&g_once, &Init);
  return g_config.output_path;
}

int aiprof_sdk_abi_version(void) { return AIPROF_SDK_ABI_VERSION; }

}  // extern "C"
