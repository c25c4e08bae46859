// Test program for aiprof trace (hand-made, built by the test suite twice:
// with and without frame pointers). Spends known shares of time in named
// functions, inside SDK spans when built with the SDK (AIPROF_WITH_SDK).
// Spins last a fixed CPU time (so sample counts do not depend on load):
//   workload spans N     N x (span "phase_a": SpinA 20 ms, span "phase_b": SpinB 10 ms)
//   workload threads     threads "worker_a" (SpinA) and "worker_b" (SpinB), 0.3 s each
//   workload fork        parent SpinA, forked child SpinB, 0.3 s each
//   workload crash       SpinA 0.2 s, then SIGSEGV
//   workload work N      fixed work: N x 10^8 loop iterations in SpinFixed; prints
//                        its own run time and CPU time on stderr
//   workload wait S      prints "ready", SpinWallA for S wall seconds; a thread "late"
//                        starts on SIGUSR1 and runs SpinWallB for 1 s (for --pid: the
//                        test sends it once aiprof says it attached)
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

#ifdef AIPROF_WITH_SDK
#include <aiprof/aiprof.h>
#define SPAN_BEGIN(name) aiprof_span_begin(name)
#define SPAN_END() aiprof_span_end()
#define ITER_BEGIN() aiprof_iteration_start()
#define ITER_END() aiprof_iteration_end()
#else
#define SPAN_BEGIN(name) ((void)0)
#define SPAN_END() ((void)0)
#define ITER_BEGIN() ((void)0)
#define ITER_END() ((void)0)
#endif

namespace {

double NowS() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// CPU time of the calling thread: spins last a fixed amount of CPU, so the
// number of cpu-clock samples does not depend on the machine's load.
double ThreadCpuS() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

volatile double g_sink;

// `seconds` of this thread's CPU time. The clock is read once per ~100k
// iterations, so nearly every sample's leaf is the spinning function itself.
__attribute__((noinline)) void SpinA(double seconds) {
  const double end = ThreadCpuS() + seconds;
  double x = 0;
  while (ThreadCpuS() < end) {
    for (int i = 0; i < 100000; ++i) x += static_cast<double>(i) * 0.5;
  }
  g_sink = x;
}

__attribute__((noinline)) void SpinB(double seconds) {
  const double end = ThreadCpuS() + seconds;
  double x = 1;
  while (ThreadCpuS() < end) {
    for (int i = 0; i < 100000; ++i) x *= 1.0000001;
  }
  g_sink = x;
}

// Wall-clock variants (the --pid test needs the target alive for a known time).
__attribute__((noinline)) void SpinWallA(double seconds) {
  const double end = NowS() + seconds;
  double x = 0;
  while (NowS() < end) {
    for (int i = 0; i < 100000; ++i) x += static_cast<double>(i) * 0.5;
  }
  g_sink = x;
}

__attribute__((noinline)) void SpinWallB(double seconds) {
  const double end = NowS() + seconds;
  double x = 1;
  while (NowS() < end) {
    for (int i = 0; i < 100000; ++i) x *= 1.0000001;
  }
  g_sink = x;
}

__attribute__((noinline)) double SpinFixed(long iterations) {
  double x = 0;
  for (long i = 0; i < iterations; ++i) x += static_cast<double>(i) * 0.5;
  return x;
}

double CpuS() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

int Work(double hundred_millions) {
  const double t0 = NowS(), c0 = CpuS();
  g_sink = SpinFixed(static_cast<long>(hundred_millions * 1e8));
  std::fprintf(stderr, "workload_elapsed_s %.6f workload_cpu_s %.6f\n", NowS() - t0, CpuS() - c0);
  return 0;
}

int Spans(int n) {
  for (int i = 0; i < n; ++i) {
    ITER_BEGIN();
    SPAN_BEGIN("phase_a");
    SpinA(0.020);
    SPAN_END();
    SPAN_BEGIN("phase_b");
    SpinB(0.010);
    SPAN_END();
    ITER_END();
  }
  return 0;
}

int Threads() {
  std::thread a([] {
    pthread_setname_np(pthread_self(), "worker_a");
    SpinA(0.3);
  });
  std::thread b([] {
    pthread_setname_np(pthread_self(), "worker_b");
    SpinB(0.3);
  });
  a.join();
  b.join();
  return 0;
}

int Fork() {
  pid_t child = fork();
  if (child == 0) {
    SpinB(0.3);
    _exit(0);
  }
  SpinA(0.3);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int Crash() {
  SpinA(0.2);
  std::fflush(nullptr);
  raise(SIGSEGV);
  return 0;
}

volatile sig_atomic_t g_start_late = 0;
void OnStartLate(int) { g_start_late = 1; }

int Wait(double seconds) {
  signal(SIGUSR1, OnStartLate);
  std::printf("ready %d\n", static_cast<int>(getpid()));
  std::fflush(stdout);
  std::thread late;
  const double end = NowS() + seconds;
  while (NowS() < end) {
    SpinWallA(0.05);
    if (g_start_late && !late.joinable()) {
      late = std::thread([] {
        pthread_setname_np(pthread_self(), "late");
        SpinWallB(1.0);
      });
    }
  }
  if (late.joinable()) late.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "spans";
  if (std::strcmp(mode, "spans") == 0) return Spans(argc > 2 ? std::atoi(argv[2]) : 10);
  if (std::strcmp(mode, "threads") == 0) return Threads();
  if (std::strcmp(mode, "fork") == 0) return Fork();
  if (std::strcmp(mode, "crash") == 0) return Crash();
  if (std::strcmp(mode, "work") == 0) return Work(argc > 2 ? std::atof(argv[2]) : 30);
  if (std::strcmp(mode, "wait") == 0) return Wait(argc > 2 ? std::atof(argv[2]) : 5.0);
  std::fprintf(stderr, "workload: unknown mode %s\n", mode);
  return 2;
}
