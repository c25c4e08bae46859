// LD_PRELOAD shim for monitor_e2e.py's slow-disk check (case unwritable):
// every fsync and fdatasync of the process first sleeps SLOW_FSYNC_MS, as
// they do under another program's disk writes (trial_monitor2 M3: the
// fsync of a 2 KB alert.json took 1.9 and 16 s while other programs wrote).
// Built by the test with the system's C compiler.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

static void Wait(void) {
  const char* text = getenv("SLOW_FSYNC_MS");
  const long ms = text ? atol(text) : 0;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  if (ms > 0) nanosleep(&ts, NULL);
}

int fsync(int fd) {
  Wait();
  int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  return real(fd);
}

int fdatasync(int fd) {
  Wait();
  int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  return real(fd);
}
