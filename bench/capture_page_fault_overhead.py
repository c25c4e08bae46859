#!/usr/bin/env python3
"""Overhead of aiprof trace's page-fault recording (docs/capture.md, "Page
faults"): runs a real torch program under `aiprof trace --scope framework`
with page faults on (the default) and with --no-page-faults, alternately
(on, off, off, on, on, off, ...: interleaved, so drift of the machine's
load hits both), and compares the program's own median step time (its
CLOCK_MONOTONIC prints, so aiprof's start-up and post-processing are not in
it), and the CPU time of the whole run (aiprof and the program:
getrusage(RUSAGE_CHILDREN) around each run, user + system; less sensitive to
other processes' load than wall time). Prints each round's on/off ratios and
their medians.

  capture_page_fault_overhead.py BUILD_DIR [ROUNDS [STEPS]]

Programs: test/capture/torch_train.py (a small MLP, few faults per step:
the common case) and test/capture/page_fault_churn.py (about 1,030 faults a
step: the worst case, every fault recorded)."""
import os
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def steps_of(program, stdout):
    out = []
    lines = [line.split() for line in stdout.splitlines() if line.startswith('step ')]
    if program.endswith('torch_train.py'):
        ts = [int(x[2]) for x in lines]
        out = [b - a for a, b in zip(ts, ts[1:])]
    else:
        out = [int(x[4]) - int(x[3]) for x in lines]
    return out[len(out) // 5:]  # leave the first fifth (warm-up) out


def run(aiprof, program, steps, faults, tmp):
    env = dict(os.environ)
    env.pop('GLIBC_TUNABLES', None)
    cmd = [aiprof, 'trace', '--scope', 'framework', '-o', os.path.join(tmp, 'o.aiprof')]
    if not faults:
        cmd.append('--no-page-faults')
    cmd += ['--', '/usr/bin/python3', program, str(steps)]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return statistics.median(steps_of(program, p.stdout)), cpu


def main():
    build = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    aiprof = os.path.join(build, 'aiprof')
    with open('/proc/loadavg') as f:
        print('load average at start:', f.read().split()[:3])
    with tempfile.TemporaryDirectory() as tmp:
        for name in ('torch_train.py', 'page_fault_churn.py'):
            program = os.path.join(ROOT, 'test', 'capture', name)
            ratios, cpu_ratios = [], []
            for r in range(rounds):
                order = (True, False) if r % 2 == 0 else (False, True)
                med, cpu = {}, {}
                for faults in order:
                    med[faults], cpu[faults] = run(aiprof, program, steps, faults, tmp)
                ratios.append(med[True] / med[False])
                cpu_ratios.append(cpu[True] / cpu[False])
                print('%s round %d (%s first): median step %.3f ms with faults recorded, %.3f ms without: ratio %.3f; '
                      'CPU %.2f s vs %.2f s: ratio %.3f' % (name, r + 1, 'on' if order[0] else 'off', med[True] / 1e6,
                                                          med[False] / 1e6, ratios[-1], cpu[True], cpu[False],
                                                          cpu_ratios[-1]))
            print('%s: step time ratio, median of %d rounds %.3f (min %.3f, max %.3f); CPU time ratio %.3f '
                  '(min %.3f, max %.3f)' % (name, rounds, statistics.median(ratios), min(ratios), max(ratios),
                                            statistics.median(cpu_ratios), min(cpu_ratios), max(cpu_ratios)))
    with open('/proc/loadavg') as f:
        print('load average at end:', f.read().split()[:3])


if __name__ == '__main__':
    main()
