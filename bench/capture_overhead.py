#!/usr/bin/env python3
"""Overhead of `aiprof trace` on a CPU-bound program (README "aiprof trace").

Runs test/capture/workload.cc's fixed-work mode (`work N`: N x 10^8 loop
iterations, a few seconds) alternately bare and under `aiprof trace` (default
settings: full_stack scope, --cpu-hz 999, auto unwinding), RUNS times each,
and reports medians of:
  - the program's own run (start of main to exit, printed by the program):
    the slowdown sampling causes (target <= 3%), and its CPU time
    (CLOCK_PROCESS_CPUTIME_ID, which includes the sampling interrupts and is
    less disturbed by other load on the machine);
  - the whole command's wall time minus the program's own run, bare vs
    traced: what aiprof adds before the start and after the exit (set-up,
    symbolisation, writing; target <= 1 s).
Alternating the runs spreads the machine's other load over both sides.

usage: bench/capture_overhead.py BUILD_DIR [--runs 7] [--work 30]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit('failed: %s\n%s' % (' '.join(cmd), p.stderr))
    m = re.search(r'workload_elapsed_s ([0-9.]+) workload_cpu_s ([0-9.]+)', p.stderr)
    post = re.search(r'post-processing ([0-9.]+) s', p.stderr)
    return float(m.group(1)), wall, float(post.group(1)) if post else 0.0, float(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build')
    ap.add_argument('--runs', type=int, default=7)
    ap.add_argument('--work', default='30')
    ap.add_argument('--cpu-hz', default=None)
    a = ap.parse_args()
    exe = os.path.join(a.build, 'test', 'capture_workload_fp')
    aiprof = os.path.join(a.build, 'aiprof')
    bare, traced = [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'bench.aiprof')
        extra = ['--cpu-hz', a.cpu_hz] if a.cpu_hz else []
        run([exe, 'work', a.work])  # warm the page cache
        for _ in range(a.runs):
            bare.append(run([exe, 'work', a.work]))
            traced.append(run([aiprof, 'trace', '-o', out, *extra, '--', exe, 'work', a.work]))
        size = os.path.getsize(out)
    med = lambda xs: statistics.median(xs)
    own_b, own_t = med([r[0] for r in bare]), med([r[0] for r in traced])
    add_b, add_t = med([r[1] - r[0] for r in bare]), med([r[1] - r[0] for r in traced])
    print('runs: %d bare + %d traced, alternating; load average %s' % (a.runs, a.runs, os.getloadavg()))
    print('program own run: bare %.3f s, traced %.3f s: slowdown %+.2f%% (target <= 3%%)'
          % (own_b, own_t, 100 * (own_t / own_b - 1)))
    cpu_b, cpu_t = med([r[3] for r in bare]), med([r[3] for r in traced])
    print('program CPU time (less sensitive to other load): bare %.3f s, traced %.3f s: %+.2f%%'
          % (cpu_b, cpu_t, 100 * (cpu_t / cpu_b - 1)))
    print('outside the program: bare %.3f s, traced %.3f s: aiprof adds %.3f s (target <= 1 s; '
          'post-processing alone %.3f s)' % (add_b, add_t, add_t - add_b, med([r[2] for r in traced])))
    print('trace file: %.1f MB' % (size / 1e6))


if __name__ == '__main__':
    main()
