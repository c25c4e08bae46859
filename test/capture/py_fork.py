"""Test program (hand-made) for Python frames in fork()ed children under
aiprof trace (#25): the parent forks two children with os.fork (no
multiprocessing, no exec); each busy-waits in spin_child for 0.8 s of its
CPU time and leaves through os._exit (no exit handlers), the first right
away, the second after a sleep of 0.5 s (the sampler's last flush before
os._exit is then up to 0.2 s old at most either way); the parent then
busy-waits in spin_parent. Prints "child <pid> <begin ns> <end ns>" per
child (its spin's own CLOCK_MONOTONIC) and "parent <pid>"."""
import os
import time


def spin_child(seconds):
    # CPU time of this thread, as test/capture/workload.cc's spins: the
    # samples inside the spin do not depend on the machine's load.
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for _ in range(10000):
            x += 1
    return x


def spin_parent(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += 2
    return x


for k in range(2):
    pid = os.fork()
    if pid == 0:
        t0 = time.monotonic_ns()
        spin_child(0.8)
        t1 = time.monotonic_ns()
        if k == 1:
            time.sleep(0.5)
        os.write(1, b'child %d %d %d\n' % (os.getpid(), t0, t1))
        os._exit(0)
    os.waitpid(pid, 0)
spin_parent(0.3)
print('parent %d' % os.getpid(), flush=True)
