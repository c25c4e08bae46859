#!/usr/bin/env python3
"""End-to-end test of aiprof's page-fault layer on a real torch program.

test/capture/page_fault_churn.py (CPU PyTorch, SGD, a fresh, growing 4 MiB
buffer each step) runs under `aiprof trace --scope framework` twice:

1. glibc's default allocator: every buffer is mmapped afresh (about 1,030
   first-touch faults a step). aiprof's per-step fault counts (`analyze
   --only page_faults --format json`, steps from the hook's optimizer.step
   boundaries) are compared, step by step, with the program's own
   getrusage(RUSAGE_SELF).ru_minflt deltas over the same window (the end of
   one optimizer.step to the end of the next; an independent count, by the
   kernel's rusage accounting, not perf). Tolerance per step: 16 faults or
   2%, whichever is larger: the two windows differ by the few microseconds
   between the hook's boundary (inside the wrapped optimizer.step) and the
   program's getrusage call, and the Python work there can take a fault or
   two; perf's software event counts the same minor faults rusage does
   (user and kernel mode: capture.page_faults.kernel must be 'recorded',
   else kernel-mode faults are missing and the check is skipped with a
   reason). The rule page_fault_churn must fire; what-if outputs carry the
   page-fault note.
2. GLIBC_TUNABLES with fixed thresholds (the "steady" allocator of
   test/data/pairs): the median of the steady steps' faults must be under a
   tenth of run 1's mean, and page_fault_churn must not fire.

  page_faults_e2e_test.py --aiprof BUILD/aiprof --script test/capture/page_fault_churn.py
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

FAILURES = []
STEADY = 'glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432'


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what)
    if not cond:
        FAILURES.append(what)


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
    check(p.returncode == 0, ' '.join(cmd[:3]) + ': exit status 0 (got %d)' % p.returncode)
    return p


def section(args, path):
    p = run([args.aiprof, 'analyze', path, '--only', 'page_faults', '--format', 'json'])
    d = json.loads(p.stdout)
    return d['sections']['page_faults']['blocks']


def block(blocks, key):
    for b in blocks:
        if b.get('key') == key:
            return b
    return None


def values(blocks):
    out = {}
    for b in blocks:
        if b.get('type') == 'values':
            out.update({k: v.get('value') for k, v in b['values'].items()})
    return out


def trace(args, tmp, name, tunables):
    env = dict(os.environ)
    env.pop('GLIBC_TUNABLES', None)
    if tunables:
        env['GLIBC_TUNABLES'] = tunables
    # One torch chunk for the whole run: a chunk export at a step boundary
    # allocates, and its faults would land in a step.
    env['AIPROF_TORCH_CHUNK_STEPS'] = '1000'
    env['AIPROF_TORCH_CHUNK_SECONDS'] = '1000'
    out = os.path.join(tmp, name + '.aiprof')
    p = run([args.aiprof, 'trace', '--scope', 'framework', '-o', out, '--', args.python, args.script, str(args.steps)],
            env=env)
    sys.stderr.write(p.stderr)
    program = []
    for line in p.stdout.splitlines():
        x = line.split()
        if x and x[0] == 'step':
            program.append((int(x[1]), int(x[2]), int(x[3]), int(x[4])))
    check(len(program) == args.steps, '%s: the program ran %d steps (%d)' % (name, args.steps, len(program)))
    return out, program


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--aiprof', required=True)
    ap.add_argument('--script', required=True)
    ap.add_argument('--python', default='/usr/bin/python3')
    ap.add_argument('--steps', type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path, program = trace(args, tmp, 'default', None)
        blocks = section(args, path)
        kv = values(blocks)
        meta = json.loads(run([args.aiprof, 'query', path, 'select key, value from metadata', '--format', 'json']).stdout)
        meta = {k: v for k, v in meta['rows']}
        check(meta.get('capture.page_faults') == 'on', 'default: page faults recorded (%s)' % meta.get('capture.page_faults'))
        check(float(meta.get('capture.page_fault_cost_ns', 0)) > 0, 'default: the cost of a fault measured (%s ns)'
              % meta.get('capture.page_fault_cost_ns'))
        check(meta.get('capture.page_faults.lost_records') == '0', 'default: no fault record lost (%s)'
              % meta.get('capture.page_faults.lost_records'))
        steps = block(blocks, 'steps')
        rows = steps['rows'] if steps else []
        check(len(rows) >= args.steps - 2, 'default: %d steps with fault counts' % len(rows))
        # Match each aiprof step to the program's step whose window starts
        # nearest its start (both CLOCK_MONOTONIC; the program's steps are
        # 40 ms or more apart, so 10 ms is unambiguous; on a loaded machine
        # the thread can be preempted between the hook's boundary and the
        # program's getrusage for a few ms).
        compared, worst = 0, 0
        if meta.get('capture.page_faults.kernel') != 'recorded':
            print('skip per-step comparison: kernel-mode faults excluded (perf_event_paranoid), rusage counts them')
        else:
            for r in rows:
                start = r['start_ns']
                prog = min(program, key=lambda p: abs(p[2] - start))
                if abs(prog[2] - start) > 10_000_000:
                    continue
                got, want = r['faults'], prog[1]
                tol = max(16, 0.02 * want)
                worst = max(worst, abs(got - want))
                compared += 1
                check(abs(got - want) <= tol, 'default: step %d: aiprof %d faults, getrusage %d (tolerance %d)'
                      % (r['step'], got, want, tol))
            check(compared >= len(rows) - 1 and compared >= args.steps - 4, 'default: %d steps compared with getrusage (worst |diff| %d)'
                  % (compared, worst))
        per_step = kv.get('faults_per_base') or 0
        check(per_step > 800, 'default: %.0f faults per steady step (> 800: a fresh 4 MiB buffer a step)' % per_step)
        check((kv.get('share') or 0) > 0.1, 'default: estimated fault time %.1f%% of the step' % (100 * (kv.get('share') or 0)))
        diag = json.loads(run([args.aiprof, 'diagnose', path, '--no-calibrate', '--format', 'json']).stdout)
        found = [f.get('rule') or f.get('id') for f in diag.get('findings', [])]
        check('page_fault_churn' in found, 'default: page_fault_churn fires (%s)' % found)
        w = run([args.aiprof, 'whatif', path, '--scenario', 'scale aten::fill_ 1', '--format', 'json']).stdout
        check('page faults per step' in w and 'the replay keeps them in the ops that took them' in w,
              'default: what-if output carries the page-fault note')

        path2, program2 = trace(args, tmp, 'steady', STEADY)
        blocks2 = section(args, path2)
        kv2 = values(blocks2)
        per_step2 = kv2.get('faults_per_base')
        # The median over the steady steps: the heap still has to grow by the
        # whole buffer now and then (another allocation sits above its free
        # top), a step of ~1,100 faults in some runs, which moves the mean
        # (seen: 45 and 199 per step) but not the median (4).
        steady_rows = [r['faults'] for r in (block(blocks2, 'steps') or {}).get('rows', []) if r['steady']]
        med2 = sorted(steady_rows)[len(steady_rows) // 2] if steady_rows else None
        check(med2 is not None and med2 < per_step / 10,
              'steady: median %s faults per steady step (mean %s), under a tenth of %.0f' % (med2, per_step2, per_step))
        tail = sorted(p[1] for p in program2[args.steps // 2:])
        check(tail and tail[len(tail) // 2] < per_step / 10, 'steady: the program\'s own median of the later steps '
              '%s faults (getrusage)' % (tail[len(tail) // 2] if tail else None))
        # remove-page-faults on run 1 against run 2 measured (the fix the
        # rule suggests): printed, not checked (one pair, a loaded machine).
        pred = json.loads(run([args.aiprof, 'whatif', path, '--scenario', 'remove-page-faults', '--format', 'json']).stdout)
        meas = json.loads(run([args.aiprof, 'whatif', path2, '--scenario', 'scale aten::fill_ 1', '--format', 'json']).stdout)
        p0, m2 = pred['scenarios'][0] if 'scenarios' in pred else pred, meas['scenarios'][0] if 'scenarios' in meas else meas
        print('info: remove-page-faults on the default run: %.2f ms -> %.2f ms [%.2f, %.2f] per step (median); '
              'the steady-allocator run measured %.2f ms' % (p0['measured_ns'] / 1e6, p0['predicted_ns'] / 1e6,
                                                            p0['predicted_interval_ns'][0] / 1e6,
                                                            p0['predicted_interval_ns'][1] / 1e6, m2['measured_ns'] / 1e6))
        diag2 = json.loads(run([args.aiprof, 'diagnose', path2, '--no-calibrate', '--format', 'json']).stdout)
        found2 = [f.get('rule') or f.get('id') for f in diag2.get('findings', [])]
        check('page_fault_churn' not in found2, 'steady: page_fault_churn does not fire (%s)' % found2)
    if FAILURES:
        print('%d check(s) failed' % len(FAILURES))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
