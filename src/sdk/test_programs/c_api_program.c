/* A C program (compiled as C11) that drives the SDK for test/sdk/sdk_test.cc:
 * each scenario records a known pattern and prints, on stdout, the figures
 * the test checks the written .aiprof file against (measured here with
 * CLOCK_MONOTONIC, independently of the SDK).
 *
 *   c_api_program threads N M   N threads x M spans "work"
 *   c_api_program busy          nested spans around busy-waits
 *   c_api_program steps K       K iterations with a "forward" span each
 *   c_api_program data K NAME   K iterations, each a span "train_step" holding a span
 *                               NAME that sleeps 4 ms (loading a batch; its last ms in a
 *                               span "collate") and a "forward" span that busy-waits
 *                               5 ms; a thread records 2 ms "decode" spans meanwhile
 *   c_api_program requests K    K requests begun on one thread, ended on another
 *   c_api_program ring N        N spans on the main thread, 10 on a worker
 *   c_api_program fork          spans in a parent and a forked child
 *   c_api_program fork_exit N   a forked child records N spans on two threads,
 *                               a request, counters, then leaves by _exit()
 *   c_api_program fork_busy N   forks N children while a thread records; prints
 *                               how many did not exit 0
 *   c_api_program kill N        N spans, then SIGKILL to itself
 *   c_api_program sigkill_writing N  N spans, a flush, N more, then SIGKILL in the middle of the next flush
 *   c_api_program held_writer N      N spans; while a flush is held mid-write, runs `steps 1` in the same folder
 *   c_api_program registry_during_flush  ring mode: a thread starts and one exits while a flush is held
 *                               in its copy of a ring
 *   c_api_program tokens K      K requests, each a prefill and 1 + 1 + 3 output
 *                               tokens 1 ms apart; prints its own times (ns)
 *   c_api_program api           every other call of the C API
 *   c_api_program signal        AIPROF_FLUSH_SIGNAL: a signal writes the file
 *   c_api_program misuse        ends without begins, a span left open in a step, null and non-UTF-8 names
 *   c_api_program serve S [own] requests for S seconds (a service a monitor attaches to), each
 *                               setting three counters: "served" (requests so far) and two names
 *                               that differ past the live channel's 59 bytes (-1 and -2);
 *                               `own`: with its own SIGTERM handler (exit status 7)
 *   c_api_program churn N C     N short-lived threads, C at a time, one span each;
 *                               prints VmRSS after the first 500 and at the end
 */
#define _POSIX_C_SOURCE 200809L
#include <aiprof/aiprof.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void BusyWaitNs(int64_t ns) {
  int64_t end = NowNs() + ns;
  while (NowNs() < end) {
  }
}

static long g_spans_per_thread;

static void* SpanThread(void* arg) {
  (void)arg;
  for (long i = 0; i < g_spans_per_thread; ++i) {
    aiprof_span_begin("work");
    aiprof_span_end();
  }
  return NULL;
}

static int Threads(int n, long m) {
  pthread_t t[64];
  if (n > 64) return 2;
  g_spans_per_thread = m;
  for (int i = 0; i < n; ++i) pthread_create(&t[i], NULL, SpanThread, NULL);
  for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
  printf("spans %ld\n", (long)n * m);
  return 0;
}

/* outer { 2 ms; inner { 3 ms }; 1 ms }, five times; prints the nominal and
 * the outside-measured durations. */
static int Busy(void) {
  for (int i = 0; i < 5; ++i) {
    int64_t t0 = NowNs();
    aiprof_span_begin("outer");
    BusyWaitNs(2000000);
    int64_t i0 = NowNs();
    aiprof_span_begin("inner");
    BusyWaitNs(3000000);
    aiprof_span_end();
    int64_t i1 = NowNs();
    BusyWaitNs(1000000);
    aiprof_span_end();
    int64_t t1 = NowNs();
    printf("outer 6000000 %lld\ninner 3000000 %lld\n", (long long)(t1 - t0), (long long)(i1 - i0));
  }
  return 0;
}

static int Steps(int k) {
  for (int i = 0; i < k; ++i) {
    int64_t t0 = NowNs();
    aiprof_iteration_start();
    aiprof_span_begin("forward");
    BusyWaitNs(200000);
    aiprof_span_end();
    aiprof_iteration_end();
    printf("step %d %lld\n", i, (long long)(NowNs() - t0));
  }
  return 0;
}

/* A training loop that waits for its data: the span `name` sleeps (a data
 * loader's worker preparing the batch), "forward" computes. A thread
 * "prefetch" records "decode" spans all along: more span time than the
 * loop's thread. */
static int g_data_done;

static void* Prefetch(void* arg) {
  (void)arg;
  aiprof_thread_name("prefetch");
  while (!__atomic_load_n(&g_data_done, __ATOMIC_ACQUIRE)) {
    aiprof_span_begin("decode");
    struct timespec nap = {0, 2000000};
    nanosleep(&nap, NULL);
    aiprof_span_end();
  }
  return NULL;
}

static int Data(int k, const char* name) {
  pthread_t prefetch;
  pthread_create(&prefetch, NULL, Prefetch, NULL);
  for (int i = 0; i < k; ++i) {
    aiprof_iteration_start();
    aiprof_span_begin("train_step");
    aiprof_span_begin(name);
    struct timespec nap = {0, 3000000};
    while (nanosleep(&nap, &nap) != 0) {
    }
    aiprof_span_begin("collate");
    struct timespec collate = {0, 1000000};
    while (nanosleep(&collate, &collate) != 0) {
    }
    aiprof_span_end();
    aiprof_span_end();
    aiprof_span_begin("forward");
    BusyWaitNs(5000000);
    aiprof_span_end();
    aiprof_span_end();
    aiprof_iteration_end();
  }
  __atomic_store_n(&g_data_done, 1, __ATOMIC_RELEASE);
  pthread_join(prefetch, NULL);
  return 0;
}

/* Thread "frontend" begins each request inside node "recv" and hands it to
 * thread "backend", which ends it inside node "reply" 1 ms later. */
static int g_pipe[2];

static void* Backend(void* arg) {
  int k = *(int*)arg;
  aiprof_thread_name("backend");
  for (int i = 0; i < k; ++i) {
    uint64_t id;
    int64_t t_outer_begin;
    if (read(g_pipe[0], &id, sizeof(id)) != sizeof(id) ||
        read(g_pipe[0], &t_outer_begin, sizeof(t_outer_begin)) != sizeof(t_outer_begin)) {
      return NULL;
    }
    int64_t t_inner_begin;
    if (read(g_pipe[0], &t_inner_begin, sizeof(t_inner_begin)) != sizeof(t_inner_begin)) return NULL;
    aiprof_node_begin("reply");
    BusyWaitNs(1000000);
    int64_t t_inner_end = NowNs();
    aiprof_request_end(id);
    int64_t t_outer_end = NowNs();
    aiprof_node_end();
    /* The request's latency lies between these two outside measurements. */
    printf("request %llu %lld %lld\n", (unsigned long long)id, (long long)(t_inner_end - t_inner_begin),
           (long long)(t_outer_end - t_outer_begin));
  }
  return NULL;
}

static int Requests(int k) {
  pthread_t backend;
  if (pipe(g_pipe) != 0) return 2;
  aiprof_thread_name("frontend");
  pthread_create(&backend, NULL, Backend, &k);
  for (int i = 0; i < k; ++i) {
    aiprof_node_begin("recv");
    BusyWaitNs(100000);
    int64_t t_outer_begin = NowNs();
    uint64_t id = aiprof_request_begin("request");
    int64_t t_inner_begin = NowNs();
    BusyWaitNs(100000);
    aiprof_node_end();
    if (write(g_pipe[1], &id, sizeof(id)) != sizeof(id) ||
        write(g_pipe[1], &t_outer_begin, sizeof(t_outer_begin)) != sizeof(t_outer_begin) ||
        write(g_pipe[1], &t_inner_begin, sizeof(t_inner_begin)) != sizeof(t_inner_begin)) {
      return 2;
    }
  }
  pthread_join(backend, NULL);
  return 0;
}

static void* SmallThread(void* arg) {
  (void)arg;
  for (int i = 0; i < 10; ++i) {
    aiprof_span_begin("small");
    aiprof_span_end();
  }
  return NULL;
}

/* With AIPROF_RING_MB=1 (65536 events of 16 bytes) the main thread keeps its
 * newest 32768 begin/end pairs: span N-32768 ("first_kept") onwards. */
static int Ring(long n) {
  pthread_t small;
  pthread_create(&small, NULL, SmallThread, NULL);
  pthread_join(small, NULL);
  aiprof_span_begin("old");
  aiprof_span_end();
  for (long i = 0; i < n; ++i) {
    const char* name = i == n - 32769 ? "last_dropped" : i == n - 32768 ? "first_kept" : "ring";
    aiprof_span_begin(name);
    aiprof_span_end();
  }
  return 0;
}

static int Fork(void) {
  aiprof_span_begin("parent_before");
  aiprof_span_end();
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 2;
  if (child == 0) {
    for (int i = 0; i < 3; ++i) {
      aiprof_span_begin("child");
      aiprof_span_end();
    }
    printf("child %ld %s\n", (long)getpid(), aiprof_output_path());
    exit(0); /* atexit writes the child's own file */
  }
  int status = 0;
  waitpid(child, &status, 0);
  aiprof_span_begin("parent_after");
  aiprof_span_end();
  printf("parent %ld %s\n", (long)getpid(), aiprof_output_path());
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 3;
}

static int Api(const char* flush_path) {
  printf("enabled %d\nabi %d\n", aiprof_enabled(), aiprof_sdk_abi_version());
  char dynamic[32];
  snprintf(dynamic, sizeof(dynamic), "dyn_%d", 7);
  const char* a = aiprof_intern(dynamic);
  snprintf(dynamic, sizeof(dynamic), "dyn_%d", 7);
  const char* b = aiprof_intern(dynamic);
  memset(dynamic, 'x', sizeof(dynamic) - 1); /* the interned copy must not change */
  printf("intern_same %d\n", a == b && strcmp(a, "dyn_7") == 0);
  aiprof_thread_name("api-main");
  for (int i = 0; i < 10; ++i) aiprof_counter("queue_depth", (double)i * 1.5);
  aiprof_mark("checkpoint");
  aiprof_span_begin(a);
  aiprof_span_end();
  uint64_t id = aiprof_request_begin("request");
  printf("request_id_nonzero %d\n", id != 0);
  aiprof_request_end(id);
  aiprof_request_end(0); /* ignored */
  aiprof_span_begin("open_at_exit"); /* never ended: left out, counted */
  printf("flush_to %d\n", flush_path ? aiprof_flush_to(flush_path) : -2);
  printf("clock_ns_positive %d\n", aiprof_clock_ns() > 0);
  aiprof_flush();
  printf("output %s\n", aiprof_output_path());
  return 0;
}

/* Records "before", signals itself as an outside process would, waits for
 * the runtime's flush thread to write the file and moves it aside to
 * <output>.signal, then records "after" (in the file written at exit). */
static int Signal(void) {
  for (int i = 0; i < 5; ++i) {
    aiprof_span_begin("before");
    aiprof_span_end();
  }
  const char* out = aiprof_output_path();
  unlink(out);
  kill(getpid(), SIGUSR2);
  struct stat st;
  struct timespec pause = {0, 10000000};
  for (int i = 0; i < 500 && stat(out, &st) != 0; ++i) nanosleep(&pause, NULL);
  char moved[4200];
  snprintf(moved, sizeof(moved), "%s.signal", out);
  if (rename(out, moved) != 0) return 4;
  for (int i = 0; i < 3; ++i) {
    aiprof_span_begin("after");
    aiprof_span_end();
  }
  printf("signal_file %s\n", moved);
  return 0;
}

static int Misuse(void) {
  aiprof_span_end(); /* nothing open */
  aiprof_node_end(); /* nothing open */
  aiprof_iteration_start();
  aiprof_span_begin("leaked"); /* closed by the step's end */
  aiprof_iteration_end();
  aiprof_request_end(999999); /* never begun */
  uint64_t id = aiprof_request_begin("request");
  aiprof_request_end(id);
  aiprof_request_end(id); /* twice */
  (void)aiprof_request_begin("in_flight");
  aiprof_span_begin(NULL); /* recorded as the empty name */
  aiprof_span_end();
  aiprof_mark(NULL);
  aiprof_span_begin("bad\xff\xfe"); /* not UTF-8: recorded as given */
  aiprof_span_end();
  return 0;
}

static void OwnTermHandler(int sig) {
  (void)sig;
  _exit(7);
}

static int Serve(double seconds, int own_handler) {
  if (own_handler) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = OwnTermHandler;
    sigaction(SIGTERM, &sa, NULL);
  }
  int64_t end = NowNs() + (int64_t)(seconds * 1e9);
  struct timespec pause = {0, 1000000};
  double served = 0;
  while (NowNs() < end) {
    aiprof_request_end(aiprof_request_begin("request"));
    aiprof_counter("served", ++served);
    aiprof_counter("a_counter_name_that_is_longer_than_the_live_channel_keeps__one", -1);
    aiprof_counter("a_counter_name_that_is_longer_than_the_live_channel_keeps__two", -2);
    nanosleep(&pause, NULL);
  }
  return 0;
}

static long VmRssKb(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof(line), f)) {
    if (strncmp(line, "VmRSS:", 6) == 0) kb = atol(line + 6);
  }
  if (f) fclose(f);
  return kb;
}

static void* ChurnThread(void* arg) {
  char name[32];
  snprintf(name, sizeof(name), "churn-%ld", (long)(intptr_t)arg);
  aiprof_thread_name(name);
  aiprof_span_begin("churn");
  aiprof_span_end();
  return NULL;
}

/* A thread-per-request server's pattern: threads that record a little and
 * exit. The SDK's memory must not grow with their number. */
static int Churn(long n, int at_once) {
  pthread_t t[64];
  long warm_kb = -1;
  if (at_once < 1 || at_once > 64) return 2;
  for (long i = 0; i < n; i += at_once) {
    int k = 0;
    for (; k < at_once && i + k < n; ++k) {
      if (pthread_create(&t[k], NULL, ChurnThread, (void*)(intptr_t)(i + k)) != 0) return 3;
    }
    for (int j = 0; j < k; ++j) pthread_join(t[j], NULL);
    if (warm_kb < 0 && i + k >= 500) warm_kb = VmRssKb();
  }
  printf("rss_kb %ld %ld\n", warm_kb, VmRssKb());
  return 0;
}

static long g_worker_spans = 0;
static void* ChildWorker(void* arg) {
  (void)arg;
  aiprof_thread_name("child-worker");
  for (long i = 0; i < g_worker_spans; ++i) {
    aiprof_span_begin("child_worker");
    aiprof_span_end();
  }
  return NULL;
}

/* The child leaves by _exit(): no atexit, so only its spill file holds its
 * events. */
static int ForkExit(long n) {
  aiprof_span_begin("parent_before");
  aiprof_span_end();
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 2;
  if (child == 0) {
    char dyn[32];
    snprintf(dyn, sizeof(dyn), "dyn_%d", 42);
    const char* dyn_name = aiprof_intern(dyn);
    g_worker_spans = n;
    pthread_t t;
    pthread_create(&t, NULL, ChildWorker, NULL);
    for (long i = 0; i < n; ++i) {
      aiprof_span_begin(i % 2 ? "child_odd" : dyn_name);
      aiprof_counter("child_counter", (double)i);
      aiprof_span_end();
    }
    pthread_join(t, NULL);
    uint64_t r = aiprof_request_begin("child_request");
    aiprof_request_end(r);
    aiprof_span_begin("left_open");
    printf("child %ld\n", (long)getpid());
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  aiprof_span_begin("parent_after");
  aiprof_span_end();
  printf("parent %ld\n", (long)getpid());
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 3;
}

/* Forks while another thread records (a DataLoader's workers forked beside
 * a recording thread): each child records a span and leaves by _exit(0).
 * Prints how many children did not exit 0 (one killed by a signal was the
 * fork handler reading a chunk the parent linked after the fork). */
static volatile int g_busy_running = 1;
static void* BusyRecorder(void* arg) {
  (void)arg;
  while (g_busy_running) {
    aiprof_span_begin("busy");
    aiprof_span_end();
  }
  return NULL;
}

static int ForkBusy(long n) {
  pthread_t t;
  pthread_create(&t, NULL, BusyRecorder, NULL);
  struct timespec warm = {0, 20 * 1000 * 1000};
  nanosleep(&warm, NULL);
  long failed = 0;
  for (long i = 0; i < n; ++i) {
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) return 2;
    if (child == 0) {
      aiprof_span_begin("forked_child");
      aiprof_span_end();
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  g_busy_running = 0;
  pthread_join(t, NULL);
  printf("children %ld failed %ld\n", n, failed);
  return 0;
}

static int Kill(long n) {
  for (long i = 0; i < n; ++i) {
    aiprof_span_begin("before_kill");
    aiprof_span_end();
  }
  aiprof_mark("last_mark");
  printf("pid %ld\n", (long)getpid());
  fflush(stdout);
  raise(SIGKILL);
  return 1;
}

/* Killed while it writes its file: n spans, a whole file (aiprof_flush), n
 * spans more, then a file limit (RLIMIT_FSIZE) below that file's size, so
 * the next aiprof_flush() dies of SIGXFSZ in the middle of its write (no
 * core file). Prints "pid <pid>" first. */
static int KillWriting(long n) {
  printf("pid %ld\n", (long)getpid());
  fflush(stdout);
  for (long i = 0; i < n; ++i) {
    aiprof_span_begin("first_half");
    aiprof_span_end();
  }
  aiprof_flush();
  for (long i = 0; i < n; ++i) {
    aiprof_span_begin("second_half");
    aiprof_span_end();
  }
  struct rlimit none = {0, 0}, small = {256 << 10, 256 << 10};
  setrlimit(RLIMIT_CORE, &none);
  setrlimit(RLIMIT_FSIZE, &small);
  aiprof_flush();
  return 1;
}

/* As kill_writing, but the write is cut short by SIGKILL, which no process
 * can catch: the SIGXFSZ handler of the second flush (a 256 KiB file size
 * limit) sends it. Prints "pid <pid>". */
static void KillSelf(int sig) {
  (void)sig;
  kill(getpid(), SIGKILL);
}

static int SigkillWriting(long n) {
  struct rlimit none = {0, 0}, small = {256 << 10, 256 << 10};
  struct sigaction sa;
  printf("pid %ld\n", (long)getpid());
  fflush(stdout);
  for (long i = 0; i < n; ++i) {
    aiprof_span_begin("first_half");
    aiprof_span_end();
  }
  aiprof_flush();
  for (long i = 0; i < n; ++i) {
    aiprof_span_begin("second_half");
    aiprof_span_end();
  }
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = KillSelf;
  sigaction(SIGXFSZ, &sa, NULL);
  setrlimit(RLIMIT_CORE, &none);
  setrlimit(RLIMIT_FSIZE, &small);
  aiprof_flush();
  return 1;
}

/* A disk that fills while the program records: a 1 MiB file size limit
 * (RLIMIT_FSIZE, SIGXFSZ ignored, so writes past it fail with EFBIG as on
 * a full disk) set before the first event; then n spans, far more than the
 * spill file can take, and a normal exit, whose write fails too. Prints
 * "pid <pid>". */
static int DiskFull(long n) {
  struct rlimit limit = {1 << 20, 1 << 20};
  signal(SIGXFSZ, SIG_IGN);
  setrlimit(RLIMIT_FSIZE, &limit);
  printf("pid %ld\n", (long)getpid());
  fflush(stdout);
  for (long i = 0; i < n; ++i) {
    aiprof_span_begin("filling");
    aiprof_span_end();
  }
  return 0;
}

/* A fork while another thread is in the middle of a flush: the flushing
 * thread is held at a known point (its write passes a 64 KiB file size
 * limit, and its SIGXFSZ handler waits on a pipe), then the main thread
 * forks; the child lists its open files (ls -l /proc/self/fd) and the
 * parent prints "forked" once fork() returned and the child was reaped,
 * then lets the flush go on (it fails: EFBIG) and prints "flush_to <rc>".
 * Where fork() waits for the flush, the two wait for each other: an alarm
 * ends the program after 20 s (SIGALRM). */
static int g_held[2], g_release[2];

static void HoldWriter(int sig) {
  char b = 'h';
  (void)sig;
  if (write(g_held[1], &b, 1) < 0) _exit(3);
  if (read(g_release[0], &b, 1) < 0) _exit(3);
}

static void* FlushHeld(void* path) {
  int rc = aiprof_flush_to((const char*)path);
  return (void*)(intptr_t)rc;
}

static int ForkDuringFlush(const char* path) {
  struct rlimit small = {64 << 10, RLIM_INFINITY}, unlimited = {RLIM_INFINITY, RLIM_INFINITY};
  struct sigaction sa;
  pthread_t writer;
  void* rc = NULL;
  char b = 0;
  pid_t child;
  for (long i = 0; i < 20000; ++i) { /* 640 KB of events: past the limit */
    aiprof_span_begin("before_fork");
    aiprof_span_end();
  }
  if (pipe(g_held) != 0 || pipe(g_release) != 0) return 2;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = HoldWriter;
  sigaction(SIGXFSZ, &sa, NULL);
  setrlimit(RLIMIT_FSIZE, &small);
  alarm(20);
  pthread_create(&writer, NULL, FlushHeld, (void*)path);
  if (read(g_held[0], &b, 1) != 1) return 2; /* the writer is in its write now */
  child = fork();
  if (child == 0) { /* what an exec'd program inherits: not the writer's file */
    execl("/bin/ls", "ls", "-l", "/proc/self/fd", (char*)NULL);
    _exit(127);
  }
  waitpid(child, NULL, 0);
  printf("forked\n");
  fflush(stdout);
  signal(SIGXFSZ, SIG_IGN);
  if (write(g_release[1], &b, 1) != 1) return 2;
  pthread_join(writer, &rc);
  setrlimit(RLIMIT_FSIZE, &unlimited);
  printf("flush_to %d\n", (int)(intptr_t)rc);
  return 0;
}

/* A writer that is alive while another process writes into its folder: n
 * spans, then a flush held in its write (as in fork_during_flush); meanwhile
 * `<this program> steps 1` runs with the same environment (its file goes to
 * the same folder, and its write looks for dead writers' temporary files).
 * Then prints "tmp <name>" for each temporary file in the folder (AIPROF_OUTPUT,
 * a folder ending in '/') and lets the flush go on (it fails: EFBIG). */
static int HeldWriter(long n, const char* self) {
  struct rlimit small = {64 << 10, RLIM_INFINITY}, unlimited = {RLIM_INFINITY, RLIM_INFINITY};
  struct sigaction sa;
  pthread_t writer;
  char b = 0;
  pid_t child;
  int status = 0;
  const char* dir = getenv("AIPROF_OUTPUT");
  DIR* d;
  struct dirent* e;
  if (!dir) return 2;
  for (long i = 0; i < n; ++i) {
    aiprof_span_begin("held");
    aiprof_span_end();
  }
  if (pipe(g_held) != 0 || pipe(g_release) != 0) return 2;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = HoldWriter;
  sigaction(SIGXFSZ, &sa, NULL);
  setrlimit(RLIMIT_FSIZE, &small);
  alarm(20);
  pthread_create(&writer, NULL, FlushHeld, (void*)aiprof_output_path());
  if (read(g_held[0], &b, 1) != 1) return 2; /* the writer is in its write now */
  setrlimit(RLIMIT_FSIZE, &unlimited);
  child = fork();
  if (child == 0) {
    execl(self, self, "steps", "1", (char*)NULL);
    _exit(127);
  }
  waitpid(child, &status, 0);
  printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  d = opendir(dir);
  while (d && (e = readdir(d)) != NULL) {
    if (strstr(e->d_name, ".tmp.")) printf("tmp %s\n", e->d_name);
  }
  if (d) closedir(d);
  fflush(stdout);
  signal(SIGXFSZ, SIG_IGN);
  if (write(g_release[1], &b, 1) != 1) return 2;
  pthread_join(writer, NULL);
  return 0;
}

/* A thread that starts and one that exits while a flush (ring mode) is held
 * in its copy of the rings: the flushing thread is stopped in the malloc of
 * its copy of the main thread's full ring (AIPROF_RING_MB=0.5: 32,768 events,
 * a 512 KiB copy; this program's malloc, which holds the first such call made
 * by the flushing thread until released). Meanwhile a new thread records a
 * span (its first call registers it) and an older thread exits (the SDK
 * marks its buffer idle). Prints "registered 1" when the new thread's span
 * was recorded within 5 s (0: it waited for the flush), "exited 1" when the
 * other thread's exit ended within 5 s, then lets the flush go on and
 * prints "flush <rc>". Skipped ("skipped") under sanitizers that replace
 * malloc. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define AIPROF_TEST_NO_MALLOC_HOOK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define AIPROF_TEST_NO_MALLOC_HOOK 1
#endif
#endif

#ifndef AIPROF_TEST_NO_MALLOC_HOOK
extern void* __libc_malloc(size_t n);
static size_t g_hold_size;
static volatile int g_hold_used;
static __thread int t_hold_here;
static int g_copy_held[2], g_copy_release[2];

void* malloc(size_t n) {
  if (t_hold_here && n == g_hold_size && !g_hold_used) {
    char b = 'h';
    g_hold_used = 1;
    if (write(g_copy_held[1], &b, 1) != 1 || read(g_copy_release[0], &b, 1) != 1) _exit(3);
  }
  return __libc_malloc(n);
}

static void* FlushInCopy(void* path) {
  t_hold_here = 1;
  return (void*)(intptr_t)aiprof_flush_to((const char*)path);
}
#endif

static int g_started[2], g_go_exit[2], g_exiter_recorded[2];

static void* StartDuringFlush(void* arg) {
  char b = 's';
  (void)arg;
  aiprof_span_begin("started_during_flush");
  aiprof_span_end();
  if (write(g_started[1], &b, 1) != 1) _exit(3);
  return NULL;
}

static void* ExitDuringFlush(void* arg) {
  char b = 0;
  (void)arg;
  aiprof_span_begin("exits_during_flush");
  aiprof_span_end();
  /* Its span is in its ring before the flush begins (under load the thread
     could otherwise first run after the flush took its snapshot). */
  if (write(g_exiter_recorded[1], "r", 1) != 1) _exit(3);
  if (read(g_go_exit[0], &b, 1) != 1) _exit(3);
  return NULL; /* the SDK's exit runs now (a thread-specific destructor) */
}

extern int pthread_timedjoin_np(pthread_t thread, void** ret, const struct timespec* abstime);

static int RegistryDuringFlush(const char* path) {
#ifdef AIPROF_TEST_NO_MALLOC_HOOK
  (void)path;
  (void)g_started;
  (void)g_go_exit;
  (void)g_exiter_recorded;
  (void)StartDuringFlush;
  (void)ExitDuringFlush;
  printf("skipped\n");
  return 0;
#else
  pthread_t writer, starter, exiter;
  struct pollfd started;
  struct timespec deadline;
  void* rc = NULL;
  char b = 'g';
  int registered, exited;
  const char* mb = getenv("AIPROF_RING_MB");
  if (!mb || strcmp(mb, "0.5") != 0) return 2;
  if (pipe(g_copy_held) != 0 || pipe(g_copy_release) != 0 || pipe(g_started) != 0 || pipe(g_go_exit) != 0 ||
      pipe(g_exiter_recorded) != 0)
    return 2;
  alarm(30);
  pthread_create(&exiter, NULL, ExitDuringFlush, NULL);
  if (read(g_exiter_recorded[0], &b, 1) != 1) return 2;
  for (long i = 0; i < 20000; ++i) { /* 40,000 events: the main thread's ring is full */
    aiprof_span_begin("fills_the_ring");
    aiprof_span_end();
  }
  g_hold_size = 32768 * 16;
  pthread_create(&writer, NULL, FlushInCopy, (void*)path);
  if (read(g_copy_held[0], &b, 1) != 1) return 2; /* the writer is in its copy now */
  pthread_create(&starter, NULL, StartDuringFlush, NULL);
  started.fd = g_started[0];
  started.events = POLLIN;
  registered = poll(&started, 1, 5000) == 1;
  printf("registered %d\n", registered);
  if (write(g_go_exit[1], &b, 1) != 1) return 2;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 5;
  exited = pthread_timedjoin_np(exiter, NULL, &deadline) == 0;
  printf("exited %d\n", exited);
  fflush(stdout);
  if (write(g_copy_release[1], &b, 1) != 1) return 2;
  pthread_join(writer, &rc);
  pthread_join(starter, NULL);
  if (!exited) pthread_join(exiter, NULL);
  printf("flush %d\n", (int)(intptr_t)rc);
  return 0;
#endif
}

static int MapCount(void) {
  FILE* f = fopen("/proc/self/maps", "r");
  int n = 0;
  char line[4096];
  if (!f) return -1;
  while (fgets(line, sizeof(line), f)) ++n;
  fclose(f);
  return n;
}

/* The process's memory mappings around n spans on one thread (record
 * mode): prints "maps <after the first span> <after all>". */
static int Maps(long n) {
  aiprof_span_begin("mapped");
  aiprof_span_end();
  int before = MapCount();
  for (long i = 1; i < n; ++i) {
    aiprof_span_begin("mapped");
    aiprof_span_end();
  }
  printf("maps %d %d\n", before, MapCount());
  return 0;
}

/* Each request: begin, prefill (16 prompt tokens) 1 ms later, a token 2 ms
 * later, another 1 ms later, then 3 at once 1 ms later, end. Prints
 * "req <begin> <prefill> <t1> <t2> <t3> <end>" with this program's own
 * CLOCK_MONOTONIC around each call (the SDK's time lies between). */
static int Tokens(int k) {
  for (int i = 0; i < k; ++i) {
    int64_t b0 = NowNs();
    uint64_t r = aiprof_request_begin("generate");
    int64_t b1 = NowNs();
    BusyWaitNs(1000000);
    int64_t p0 = NowNs();
    aiprof_request_prefill(r, 16);
    int64_t p1 = NowNs();
    BusyWaitNs(2000000);
    int64_t t10 = NowNs();
    aiprof_request_token(r);
    int64_t t11 = NowNs();
    BusyWaitNs(1000000);
    int64_t t20 = NowNs();
    aiprof_request_token(r);
    int64_t t21 = NowNs();
    BusyWaitNs(1000000);
    int64_t t30 = NowNs();
    aiprof_request_tokens(r, 3);
    int64_t t31 = NowNs();
    int64_t e0 = NowNs();
    aiprof_request_end(r);
    int64_t e1 = NowNs();
    printf("req %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld\n", (long long)b0, (long long)b1,
           (long long)p0, (long long)p1, (long long)t10, (long long)t11, (long long)t20, (long long)t21,
           (long long)t30, (long long)t31, (long long)e0, (long long)e1);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* s = argv[1];
  if (strcmp(s, "threads") == 0 && argc == 4) return Threads(atoi(argv[2]), atol(argv[3]));
  if (strcmp(s, "busy") == 0) return Busy();
  if (strcmp(s, "steps") == 0 && argc == 3) return Steps(atoi(argv[2]));
  if (strcmp(s, "data") == 0 && argc == 4) return Data(atoi(argv[2]), argv[3]);
  if (strcmp(s, "requests") == 0 && argc == 3) return Requests(atoi(argv[2]));
  if (strcmp(s, "ring") == 0 && argc == 3) return Ring(atol(argv[2]));
  if (strcmp(s, "fork") == 0) return Fork();
  if (strcmp(s, "fork_exit") == 0 && argc == 3) return ForkExit(atol(argv[2]));
  if (strcmp(s, "fork_busy") == 0 && argc == 3) return ForkBusy(atol(argv[2]));
  if (strcmp(s, "kill") == 0 && argc == 3) return Kill(atol(argv[2]));
  if (strcmp(s, "kill_writing") == 0 && argc == 3) return KillWriting(atol(argv[2]));
  if (strcmp(s, "sigkill_writing") == 0 && argc == 3) return SigkillWriting(atol(argv[2]));
  if (strcmp(s, "registry_during_flush") == 0 && argc == 3) return RegistryDuringFlush(argv[2]);
  if (strcmp(s, "held_writer") == 0 && argc == 3) return HeldWriter(atol(argv[2]), argv[0]);
  if (strcmp(s, "disk_full") == 0 && argc == 3) return DiskFull(atol(argv[2]));
  if (strcmp(s, "maps") == 0 && argc == 3) return Maps(atol(argv[2]));
  if (strcmp(s, "fork_during_flush") == 0 && argc == 3) return ForkDuringFlush(argv[2]);
  if (strcmp(s, "tokens") == 0 && argc == 3) return Tokens(atoi(argv[2]));
  if (strcmp(s, "api") == 0) return Api(argc >= 3 ? argv[2] : NULL);
  if (strcmp(s, "signal") == 0) return Signal();
  if (strcmp(s, "misuse") == 0) return Misuse();
  if (strcmp(s, "serve") == 0 && argc >= 3) return Serve(atof(argv[2]), argc > 3 && strcmp(argv[3], "own") == 0);
  if (strcmp(s, "churn") == 0 && argc == 4) return Churn(atol(argv[2]), atoi(argv[3]));
  fprintf(stderr, "unknown scenario %s\n", s);
  return 2;
}
