#!/usr/bin/env python3
"""Browser test of the timeline's instants on a real capture: runs
test/capture/page_fault_churn.py (CPU PyTorch, a fresh 8 MiB buffer a step,
a few thousand minor page faults a step) under `aiprof trace --scope
framework`, then writes the timeline page of the capture.

  make_fault_page.py --aiprof AIPROF --script page_fault_churn.py --make-capture OUT.aiprof [--fault-period N]
  make_fault_page.py --aiprof AIPROF --capture OUT.aiprof --html OUT.html --variant full|binned|hostile

The first form only captures (OUT.aiprof, and the program's output in
OUT.aiprof.out): a ctest fixture, so that tests share a capture.

Beside the page it writes faults_expected_<page name>.json for the checks
(timeline_instants_checks.js), computed without the view's code:
  * records: every fault record's [tid, ts_ns], read from the capture
    exported as Chrome JSON (`aiprof export --format chrome-json`);
  * program: the program's own per-step lines "step N <minflt> <t0> <t1>"
    (getrusage ru_minflt deltas, CLOCK_MONOTONIC ns: the kernel's count);
  * meta: capture.page_faults.period, capture.page_fault_cost_ns,
    capture.page_faults.kernel (`aiprof query ... metadata`).

Variant `full` views the .aiprof (every instant kept one by one); `binned`
views it under AIPROF_VIEW_MAX_INSTANTS=1000 (count bins only; its capture is
made with --fault-period 4); `hostile` views the exported JSON (no capture
metadata: the cost of a fault is unknown, the period taken as 1) with three
added instants whose name and category are hostile markup."""
import argparse
import json
import os
import subprocess
import sys

HOSTILE = "</script><img src=x onerror=alert(1)>"


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        sys.exit('failed: ' + ' '.join(cmd))
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--aiprof', required=True)
    ap.add_argument('--script')
    ap.add_argument('--python', default='/usr/bin/python3')
    ap.add_argument('--make-capture', help='capture into this file (and PATH.out), then stop')
    ap.add_argument('--fault-period', type=int, default=1)
    ap.add_argument('--capture', help='the capture to view (and its program output, PATH.out)')
    ap.add_argument('--html')
    ap.add_argument('--variant', choices=['full', 'binned', 'hostile'], default='full')
    a = ap.parse_args()
    env = dict(os.environ)
    for k in ('GLIBC_TUNABLES', 'LD_PRELOAD', 'MALLOC_CONF'):
        env.pop(k, None)
    if a.make_capture:
        # One torch chunk for the whole run (as test/e2e/page_faults_e2e_test.py does).
        env['AIPROF_TORCH_CHUNK_STEPS'] = '1000'
        env['AIPROF_TORCH_CHUNK_SECONDS'] = '1000'
        os.makedirs(os.path.dirname(os.path.abspath(a.make_capture)), exist_ok=True)
        stdout = run([a.aiprof, 'trace', '--scope', 'framework', '--fault-period', str(a.fault_period),
                      '-o', a.make_capture, '--', a.python, a.script, '20', '8'], env=env).stdout
        with open(a.make_capture + '.out', 'w') as f:
            f.write(stdout)
        return
    if not a.capture or not a.html:
        sys.exit('--capture and --html are required (or --make-capture)')
    out_dir = os.path.dirname(os.path.abspath(a.html))
    os.makedirs(out_dir, exist_ok=True)
    cap = a.capture
    stdout = open(cap + '.out').read()
    program = []
    for line in stdout.splitlines():
        x = line.split()
        if x and x[0] == 'step':
            program.append([int(x[1]), int(x[2]), int(x[3]), int(x[4])])
    if len(program) < 5:
        sys.exit('the program printed %d steps' % len(program))
    exported = os.path.join(out_dir, 'faults_' + a.variant + '.json')
    run([a.aiprof, 'export', cap, '--format', 'chrome-json', '-o', exported])
    with open(exported) as f:
        trace = json.load(f)
    events = trace['traceEvents'] if isinstance(trace, dict) else trace
    records = [[e['tid'], round(e['ts'] * 1000)] for e in events
               if e.get('ph') == 'i' and e.get('cat') == 'aiprof_page_fault']
    meta = json.loads(run([a.aiprof, 'query', cap, 'select key, value from metadata', '--format', 'json']).stdout)
    meta = {k: v for k, v in meta['rows'] if k.startswith('capture.page_fault')}
    if not records:
        sys.exit('the capture holds no page fault records (capture.page_faults = %s): perf must be allowed to '
                 'record software events (perf_event_paranoid)' % meta.get('capture.page_faults', 'absent'))
    page_input = cap
    view_env = dict(env)
    hostile = []
    if a.variant == 'binned':
        view_env['AIPROF_VIEW_MAX_INSTANTS'] = '1000'
    if a.variant == 'hostile':
        main_tid = max(set(r[0] for r in records), key=lambda t: sum(1 for r in records if r[0] == t))
        pid = next(e['pid'] for e in events if e.get('tid') == main_tid)
        t0 = program[len(program) // 2][2]
        for k in range(3):
            ts = t0 + 1000 * k
            events.append({'ph': 'i', 's': 't', 'name': HOSTILE, 'cat': '<b>' + HOSTILE + '</b>', 'pid': pid,
                           'tid': main_tid, 'ts': ts / 1000})
            hostile.append([main_tid, ts])
        page_input = os.path.join(out_dir, 'faults_hostile.json')
        with open(page_input, 'w') as f:
            json.dump({'traceEvents': events}, f)
        meta = {}  # the exported JSON carries no capture metadata
    sidecar = 'faults_expected_%s.json' % os.path.splitext(os.path.basename(a.html))[0]
    with open(os.path.join(out_dir, sidecar), 'w') as f:
        json.dump({'variant': a.variant, 'records': records, 'program': program, 'meta': meta, 'hostile': hostile,
                   'hostile_name': HOSTILE}, f)
    r = subprocess.run([a.aiprof, 'view', page_input, '--timeline', '-o', a.html], env=view_env)
    sys.exit(r.returncode)


if __name__ == '__main__':
    main()
