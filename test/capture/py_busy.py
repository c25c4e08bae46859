"""Test program (hand-made) for Python frames in aiprof trace's host
samples: two pure-Python busy loops, one after the other, each printing its
start and end on its own CLOCK_MONOTONIC. Each loop lasts a fixed CPU time
of its thread (as test/capture/workload.cc's spins), so the number of
cpu-clock samples inside it does not depend on the machine's load; the
clock is read once per 10,000 iterations, so nearly every sample is in the
loop's own bytecode."""
import time


def spin_alpha(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for _ in range(10000):
            x += 1
    return x


def spin_beta(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for _ in range(10000):
            x += 2
    return x


def main():
    for fn in (spin_alpha, spin_beta):
        t0 = time.monotonic_ns()
        fn(1.0)
        print('%s %d %d' % (fn.__name__, t0, time.monotonic_ns()), flush=True)


main()
