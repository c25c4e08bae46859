#!/usr/bin/env python3
"""The target's memory under `aiprof trace` over a long training run, and
the step-time overhead (#25): bench/torch_train_loop.py runs SECONDS bare,
traced with the torch layer in chunks (the default), and traced as one
chunk (AIPROF_TORCH_CHUNK_STEPS very large: what a single torch.profiler
does), interleaved ROUNDS times. The python process's RSS is read from
/proc every second; printed: peak and final RSS, RSS growth per minute over
the second half, median step time, aiprof's post-processing time.

  capture_torch_memory.py BUILD_DIR [SECONDS=60] [ROUNDS=1]

Run on a machine otherwise idle; the figures go to README.md.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def rss_kb(pid):
    try:
        with open('/proc/%d/status' % pid) as f:
            m = re.search(r'VmRSS:\s+(\d+)', f.read())
            return int(m.group(1)) if m else None
    except OSError:
        return None


def python_pid(root):
    # The traced python is aiprof's child; bare, it is the root itself.
    try:
        with open('/proc/%d/task/%d/children' % (root, root)) as f:
            kids = [int(x) for x in f.read().split()]
    except OSError:
        kids = []
    return kids[0] if kids else root


def run(aiprof, seconds, mode):
    prog = [sys.executable, os.path.join(HERE, 'torch_train_loop.py'), str(seconds)]
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        if mode == 'bare':
            cmd = prog
        else:
            cmd = [aiprof, 'trace', '--scope', 'framework', '--cpu-hz', '0', '-o', os.path.join(tmp, 't.aiprof'), '--'] + prog
            if mode == 'one_chunk':
                env['AIPROF_TORCH_CHUNK_STEPS'] = '100000000'
                env['AIPROF_TORCH_CHUNK_SECONDS'] = '100000000'
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        series = []
        while p.poll() is None:
            time.sleep(1.0)
            kb = rss_kb(python_pid(p.pid))
            if kb:
                series.append((time.monotonic() - t0, kb))
        out, err = p.communicate()
        wall = time.monotonic() - t0
    m = re.search(r'steps (\d+) median_step_ms ([\d.]+)', out)
    post = re.search(r'post-processing ([\d.]+) s', err)
    half = [kb for t, kb in series if seconds / 2 <= t <= seconds]  # the training's second half
    growth = (half[-1] - half[0]) / 1024 / max(1e-9, (seconds / 2) / 60) if len(half) > 1 else 0
    return {'mode': mode, 'steps': int(m.group(1)) if m else 0, 'median_step_ms': float(m.group(2)) if m else 0,
            'peak_mb': max(kb for _, kb in series) / 1024 if series else 0,
            'final_mb': series[-1][1] / 1024 if series else 0, 'growth_mb_per_min': growth,
            'post_s': float(post.group(1)) if post else 0, 'wall_s': wall}


def main():
    build = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    aiprof = os.path.join(build, 'aiprof')
    print('%-10s %6s %9s %8s %9s %11s %7s %7s' % ('mode', 'steps', 'step ms', 'peak MB', 'final MB', 'MB/min 2nd½',
                                                  'post s', 'wall s'))
    for _ in range(rounds):
        for mode in ('bare', 'chunks', 'one_chunk'):
            r = run(aiprof, seconds, mode)
            print('%-10s %6d %9.3f %8.1f %9.1f %11.1f %7.2f %7.1f' % (
                r['mode'], r['steps'], r['median_step_ms'], r['peak_mb'], r['final_mb'], r['growth_mb_per_min'],
                r['post_s'], r['wall_s']), flush=True)


if __name__ == '__main__':
    main()
