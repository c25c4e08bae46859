"""Forked workers that leave by os._exit (a DataLoader or multiprocessing
worker's way out): each records spans through the SDK's C API (ctypes, the
library in AIPROF_TEST_SDK_LIB) and exits without its atexit handlers; the
parent exits normally. Then a multiprocessing Pool (fork start method; its
workers also end by os._exit) maps 10 tasks of 50 spans "pool_span".
Usage: fork_exit.py WORKERS SPANS.

Prints "worker <pid> <spans>" per worker, "pool <pid>" per task and
"parent <pid>"."""
import ctypes
import multiprocessing
import os
import sys

workers, spans = int(sys.argv[1]), int(sys.argv[2])
lib = ctypes.CDLL(os.environ['AIPROF_TEST_SDK_LIB'])
lib.aiprof_intern.restype = ctypes.c_void_p
lib.aiprof_intern.argtypes = [ctypes.c_char_p]
lib.aiprof_span_begin.argtypes = [ctypes.c_void_p]
parent_span = lib.aiprof_intern(b'parent_span')
worker_span = lib.aiprof_intern(b'worker_span')

lib.aiprof_span_begin(parent_span)
lib.aiprof_span_end()
pids = []
for w in range(workers):
    pid = os.fork()
    if pid == 0:
        own = lib.aiprof_intern(b'worker_%d' % w)  # a name first seen in the child
        for i in range(spans):
            lib.aiprof_span_begin(worker_span)
            lib.aiprof_span_begin(own)
            lib.aiprof_span_end()
            lib.aiprof_span_end()
        os.write(1, b'worker %d %d\n' % (os.getpid(), spans))  # one write: workers print at once
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)


def task(i):
    name = lib.aiprof_intern(b'pool_span')
    for _ in range(50):
        lib.aiprof_span_begin(name)
        lib.aiprof_span_end()
    os.write(1, b'pool %d\n' % os.getpid())
    return i


pool = multiprocessing.get_context('fork').Pool(2)
assert sorted(pool.map(task, range(10))) == list(range(10))
pool.close()
pool.join()
lib.aiprof_span_begin(parent_span)
lib.aiprof_span_end()
os.write(1, b'parent %d\n' % os.getpid())
