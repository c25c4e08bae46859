/* bench/sdk_registry_wait.py's program: how long a thread that starts or
 * exits waits while another thread flushes in ring mode.
 *
 *   sdk_registry_wait THREADS FLUSHES OUT
 *
 * THREADS threads fill their rings (AIPROF_MODE=ring, AIPROF_RING_MB each)
 * and keep recording (100 spans, then a 1 ms sleep). The main thread flushes
 * to OUT FLUSHES times, back to back; meanwhile a churn thread starts short
 * threads one after another: each times its first SDK call (the call that
 * registers it) and the churn thread times its pthread_join (the exit,
 * where the SDK marks the buffer idle). Prints one line per flush,
 * "flush <seconds>", then "register <n> <median ms> <p99 ms> <max ms> <over 5 ms>"
 * and "exit ..." (the same figures) over the threads started and joined
 * while the flushes ran. At exit the SDK is turned off (no exit
 * write). */
#define _GNU_SOURCE
#include <aiprof/aiprof.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile int g_stop, g_flushing_done;
static pthread_barrier_t g_filled;
static long g_fill;

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void* Record(void* arg) {
  (void)arg;
  for (long i = 0; i < g_fill; ++i) {
    aiprof_span_begin("fill");
    aiprof_span_end();
  }
  pthread_barrier_wait(&g_filled);
  while (!g_stop) {
    for (int i = 0; i < 100; ++i) {
      aiprof_span_begin("busy");
      aiprof_span_end();
    }
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  return NULL;
}

#define kMaxSamples 1000000
static double g_register[kMaxSamples], g_exit[kMaxSamples];
static long g_registers, g_exits;

static void* Short(void* arg) {
  double t0 = Now();
  aiprof_span_begin("short"); /* the first call: registers the thread */
  double t1 = Now();
  aiprof_span_end();
  *(double*)arg = t1 - t0;
  return NULL;
}

static void* Churn(void* arg) {
  (void)arg;
  while (!g_flushing_done) {
    pthread_t t;
    double reg = 0;
    if (pthread_create(&t, NULL, Short, &reg) != 0) break;
    /* the join returns once the thread has exited, its SDK exit included */
    double j0 = Now();
    pthread_join(t, NULL);
    double j1 = Now();
    if (g_registers < kMaxSamples) g_register[g_registers++] = reg;
    if (g_exits < kMaxSamples) g_exit[g_exits++] = j1 - j0;
  }
  return NULL;
}

static int Cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static void Report(const char* what, double* v, long n) {
  long over = 0;
  if (n == 0) {
    printf("%s 0 0 0 0 0\n", what);
    return;
  }
  qsort(v, (size_t)n, sizeof(double), Cmp);
  for (long i = 0; i < n; ++i) over += v[i] > 5e-3;
  printf("%s %ld %.4f %.4f %.4f %ld\n", what, n, v[n / 2] * 1e3, v[(long)(n * 0.99)] * 1e3, v[n - 1] * 1e3, over);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s THREADS FLUSHES OUT\n", argv[0]);
    return 2;
  }
  int threads = atoi(argv[1]), flushes = atoi(argv[2]);
  const char* mb = getenv("AIPROF_RING_MB");
  g_fill = (long)((mb ? atof(mb) : 8.0) * (1 << 20) / 16 / 2) + 1000; /* 2 events a span: the ring is full */
  if (threads < 1 || threads > 256) return 2;
  pthread_t t[256], churn;
  pthread_barrier_init(&g_filled, NULL, (unsigned)threads + 1);
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, Record, NULL);
  pthread_barrier_wait(&g_filled);
  pthread_create(&churn, NULL, Churn, NULL);
  for (int k = 0; k < flushes; ++k) {
    double t0 = Now();
    if (aiprof_flush_to(argv[3]) != 0) {
      fprintf(stderr, "flush failed\n");
      return 1;
    }
    printf("flush %.4f\n", Now() - t0);
  }
  g_flushing_done = 1;
  pthread_join(churn, NULL);
  g_stop = 1;
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  Report("register", g_register, g_registers);
  Report("exit", g_exit, g_exits);
  aiprof_set_enabled(0);
  return 0;
}
