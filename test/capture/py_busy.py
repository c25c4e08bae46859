"""Test program (hand-made) for Python frames in aiprof trace's host
samples: two pure-Python busy loops, one after the other, each printing its
start and end on its own CLOCK_MONOTONIC."""
import time


def spin_alpha(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += 1
    return x


def spin_beta(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += 2
    return x


def main():
    for fn in (spin_alpha, spin_beta):
        t0 = time.monotonic_ns()
        fn(1.0)
        print('%s %d %d' % (fn.__name__, t0, time.monotonic_ns()), flush=True)


main()
