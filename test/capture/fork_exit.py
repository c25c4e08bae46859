"""Forked workers that leave by os._exit (a DataLoader or multiprocessing
worker's way out): each records spans through the SDK's C API (ctypes, the
library in AIPROF_TEST_SDK_LIB) and exits without its atexit handlers; the
parent exits normally. Usage: fork_exit.py WORKERS SPANS.

Prints "worker <pid> <spans>" per worker and "parent <pid>"."""
import ctypes
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
lib.aiprof_span_begin(parent_span)
lib.aiprof_span_end()
os.write(1, b'parent %d\n' % os.getpid())
