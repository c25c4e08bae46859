#!/usr/bin/env python3
"""A pure-Python busy service for aiprof monitor's tests (hand-made): its
main thread never releases the GIL (no sleep, no I/O in the loop), every
5th request after the first 3 s spends 0.25 s of wall-clock time in
planted_busy_sum (timed, not a fixed amount of work: a fixed two million
rounds took under the 100 ms alert on a fast CI machine, so no incident). Before
the SDK woke the main thread, the deep trace's framework layer was "not
started: ... did not answer the live channel's command" for such a service.

  python_busy_service.py PYTHON_PACKAGE_DIR SECONDS
"""
import sys
import time

sys.path.insert(0, sys.argv[1])
import aiprof  # noqa: E402


def planted_busy_sum(seconds):
    # time.monotonic() does not release the GIL: the loop stays pure Python.
    x = 0
    end = time.monotonic() + seconds
    while True:
        for i in range(1000):
            x += i * i
        if time.monotonic() >= end:
            return x


t0 = time.monotonic()
end = t0 + float(sys.argv[2])
k = 0
while time.monotonic() < end:
    with aiprof.request("infer"):
        planted_busy_sum(0.25 if (time.monotonic() - t0 > 3 and k % 5 == 0) else 0.0)
    k += 1
