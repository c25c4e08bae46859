/* bench/sdk_flush_cost.py's program: T threads record N spans each (2
 * events a span), then the main thread calls aiprof_flush_to(OUT) F times,
 * with the threads stopped ("quiet") or still recording ("busy": 100 spans
 * then a 1 ms sleep, about 100,000 spans a second a thread; the stall a
 * training loop sees when it flushes while its other threads run). Prints one line per flush: seconds inside
 * aiprof_flush_to and the file's size. At exit the SDK is turned off, so no exit write. */
#include <aiprof/aiprof.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static volatile int g_stop;
static int g_busy;
static long g_spans;
static pthread_barrier_t g_recorded;

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void* Record(void* arg) {
  (void)arg;
  for (long i = 0; i < g_spans; ++i) {
    aiprof_span_begin("recorded");
    aiprof_span_end();
  }
  pthread_barrier_wait(&g_recorded);
  while (g_busy && !g_stop) {
    for (int i = 0; i < 100; ++i) {
      aiprof_span_begin("during_flush");
      aiprof_span_end();
    }
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s THREADS SPANS FLUSHES quiet|busy OUT\n", argv[0]);
    return 2;
  }
  int threads = atoi(argv[1]);
  g_spans = atol(argv[2]);
  int flushes = atoi(argv[3]);
  g_busy = strcmp(argv[4], "busy") == 0;
  if (threads < 1 || threads > 64) return 2;
  pthread_t t[64];
  pthread_barrier_init(&g_recorded, NULL, (unsigned)threads + 1);
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, Record, NULL);
  pthread_barrier_wait(&g_recorded);
  for (int k = 0; k < flushes; ++k) {
    double t0 = Now();
    if (aiprof_flush_to(argv[5]) != 0) {
      perror("aiprof_flush_to");
      return 1;
    }
    double t1 = Now();
    struct stat st;
    if (stat(argv[5], &st) != 0) return 1;
    printf("%.6f %lld\n", t1 - t0, (long long)st.st_size);
    fflush(stdout);
  }
  g_stop = 1;
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  aiprof_set_enabled(0);
  return 0;
}
