#!/usr/bin/env python3
"""The target's memory under `aiprof trace` over a long training run, and
the step-time overhead (#25): bench/torch_train_loop.py runs SECONDS in each
of MODES, the modes interleaved, ROUNDS times:

  bare       the program alone
  full       `aiprof trace` with its defaults: host samples (perf, DWARF
             stacks), the in-process Python sampler, counters and the torch
             op layer in chunks
  no_ops     the same without the op layer (AIPROF_CAPTURE_TORCH=0: samples,
             Python frames and counters only)
  chunks     --scope framework --cpu-hz 0: the op layer in chunks alone
  one_chunk  the op layer alone as one chunk (AIPROF_TORCH_CHUNK_STEPS very
             large: what a single torch.profiler does)
  chunks_fe  chunks, each exported through torch.profiler's FunctionEvents
             (AIPROF_TORCH_DIRECT=0: the hook's export before it read the
             profiler's result directly)

The python process's RSS is read from /proc every second (aiprof's own
peak RSS beside it, its post-processing included); printed per run:
steps, median step time and CPU per step (the program's own figures), peak
and final RSS, RSS growth per minute over the second half, aiprof's
post-processing time, the share of host samples with a Python frame (from
aiprof's summary line), the number of chunk exports and their median time
(the trace's aiprof::torch_export slices) and, with --series, the RSS
every SERIES seconds.

  capture_torch_memory.py BUILD_DIR [SECONDS=60] [ROUNDS=1] [MODES=bare,chunks,one_chunk] [--series 30]
                          [--program infer]

--program infer runs bench/capture_infer_loop.py instead: a CNN's inference
loop (model(x), no optimizer, no DataLoader), whose steps, and so chunks,
come from the outermost module call; one_chunk is then what the hook did
before it found such steps.

Run on a machine otherwise idle, or say how loaded it was; the figures go to
README.md.
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


def run(aiprof, seconds, mode, program='torch_train_loop.py'):
    prog = [sys.executable, os.path.join(HERE, program), str(seconds)]
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        out_file = os.path.join(tmp, 't.aiprof')
        if mode == 'bare':
            cmd = prog
        elif mode in ('full', 'no_ops'):
            cmd = [aiprof, 'trace', '-o', out_file, '--'] + prog
            if mode == 'no_ops':
                env['AIPROF_CAPTURE_TORCH'] = '0'
        else:
            cmd = [aiprof, 'trace', '--scope', 'framework', '--cpu-hz', '0', '-o', out_file, '--'] + prog
            if mode == 'chunks_fe':
                env['AIPROF_TORCH_DIRECT'] = '0'
            if mode == 'one_chunk':
                env['AIPROF_TORCH_CHUNK_STEPS'] = '100000000'
                env['AIPROF_TORCH_CHUNK_SECONDS'] = '100000000'
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        series = []
        target = p.pid if mode == 'bare' else None
        aiprof_peak_kb = 0
        while p.poll() is None:
            time.sleep(1.0)
            if target is None:  # the traced python: aiprof's child, once it exists
                kid = python_pid(p.pid)
                target = kid if kid != p.pid else None
            kb = rss_kb(target) if target else None
            if kb:
                series.append((time.monotonic() - t0, kb))
            if mode != 'bare':  # aiprof's own memory (its post-processing at the end)
                aiprof_peak_kb = max(aiprof_peak_kb, rss_kb(p.pid) or 0)
        out, err = p.communicate()
        wall = time.monotonic() - t0
        exports = []  # the hook's chunk exports (aiprof::torch_export), ms
        if mode != 'bare' and os.path.exists(out_file):
            q = subprocess.run([aiprof, 'query', out_file, "select dur from slices where name = 'aiprof::torch_export'",
                                '--format', 'json', '--max-rows', '0'], capture_output=True, text=True)
            if q.returncode == 0:
                import json
                exports = sorted(r[0] / 1e6 for r in json.loads(q.stdout)['rows'])
    m = re.search(r'steps (\d+) median_step_ms ([\d.]+) mean_step_ms [\d.]+ cpu_ms_per_step ([\d.]+)', out)
    post = re.search(r'post-processing ([\d.]+) s', err)
    samples = re.search(r'(\d+) host samples \(.*?(\d+) with Python frames', err)
    if mode != 'bare' and not samples:
        sys.stderr.write('%s: %s\n' % (mode, err.strip().splitlines()[-1] if err.strip() else 'no output'))
    half = [kb for t, kb in series if seconds / 2 <= t <= seconds]  # the training's second half
    growth = (half[-1] - half[0]) / 1024 / max(1e-9, (seconds / 2) / 60) if len(half) > 1 else 0
    return {'mode': mode, 'steps': int(m.group(1)) if m else 0, 'median_step_ms': float(m.group(2)) if m else 0,
            'cpu_ms_per_step': float(m.group(3)) if m else 0, 'series': series, 'aiprof_peak_mb': aiprof_peak_kb / 1024,
            'python_share': int(samples.group(2)) / max(1, int(samples.group(1))) if samples else None,
            'peak_mb': max(kb for _, kb in series) / 1024 if series else 0,
            'final_mb': series[-1][1] / 1024 if series else 0, 'growth_mb_per_min': growth,
            'post_s': float(post.group(1)) if post else 0, 'wall_s': wall,
            'exports': len(exports), 'export_ms': exports[len(exports) // 2] if exports else 0}


def main():
    args = [a for a in sys.argv[1:]]
    series_every = 0
    if '--series' in args:
        i = args.index('--series')
        series_every = float(args[i + 1])
        del args[i:i + 2]
    program = 'torch_train_loop.py'
    if '--program' in args:
        i = args.index('--program')
        program = {'infer': 'capture_infer_loop.py', 'train': 'torch_train_loop.py'}[args[i + 1]]
        del args[i:i + 2]
    build = args[0]
    seconds = float(args[1]) if len(args) > 1 else 60
    rounds = int(args[2]) if len(args) > 2 else 1
    modes = args[3].split(',') if len(args) > 3 else ['bare', 'chunks', 'one_chunk']
    aiprof = os.path.join(build, 'aiprof')
    print('%-10s %6s %9s %10s %8s %9s %11s %7s %7s %7s %9s %8s %9s' % (
        'mode', 'steps', 'step ms', 'cpu ms/st', 'peak MB', 'final MB', 'MB/min 2nd½', 'post s', 'wall s', 'py %',
        'aiprof MB', 'exports', 'export ms'))
    for _ in range(rounds):
        for mode in modes:
            r = run(aiprof, seconds, mode, program)
            py = '%.1f' % (100 * r['python_share']) if r['python_share'] is not None else '-'
            print('%-10s %6d %9.3f %10.3f %8.1f %9.1f %11.1f %7.2f %7.1f %7s %9.1f %8d %9.1f' % (
                r['mode'], r['steps'], r['median_step_ms'], r['cpu_ms_per_step'], r['peak_mb'], r['final_mb'],
                r['growth_mb_per_min'], r['post_s'], r['wall_s'], py, r['aiprof_peak_mb'], r['exports'],
                r['export_ms']), flush=True)
            if series_every > 0:
                marks, next_t = [], series_every
                for t, kb in r['series']:
                    if t >= next_t:
                        marks.append('%ds:%.0f' % (next_t, kb / 1024))
                        next_t += series_every
                print('  rss MB ' + ' '.join(marks), flush=True)


if __name__ == '__main__':
    main()
