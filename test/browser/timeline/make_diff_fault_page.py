#!/usr/bin/env python3
"""Browser test of `aiprof diff A B --timeline` on two real captures with
page fault records (the fixtures of make_fault_page.py: page_fault_churn.py
under `aiprof trace`, A with every fault recorded, B with --fault-period 4).

  make_diff_fault_page.py --aiprof AIPROF --a A.aiprof --b B.aiprof --html OUT.html [--hostile]

Beside the page it writes diff_faults_expected_<page name>.json for the
checks (timeline_diff_fault_checks.js), computed without the view's code,
by `aiprof query` over each capture: per step (number, start, duration),
the page fault records that fall in it (instants of category
aiprof_page_fault, thread-scoped, start <= ts < start + dur), and the
capture's capture.page_faults.period and capture.page_fault_cost_ns.

--hostile: B is the capture exported to Chrome JSON with three added
thread instants whose name and category are markup (and, as exported JSON
carries no capture metadata, period 1 and no cost)."""
import argparse
import json
import os
import subprocess
import sys

HOSTILE = "</script><img src=x onerror=alert(1)>"
STEP_FAULTS = """
select s.number, s.ts, s.dur,
  (select count(*) from instants i where i.category = 'aiprof_page_fault' and i.scope = 't'
     and i.ts >= s.ts and i.ts < s.ts + s.dur) as records
from steps s order by s.ts"""


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        sys.exit('failed: ' + ' '.join(cmd))
    return p


def query(aiprof, path, sql):
    return json.loads(run([aiprof, 'query', path, sql, '--format', 'json', '--max-rows', '0']).stdout)['rows']


def describe(aiprof, path):
    meta = {k: v for k, v in query(aiprof, path, 'select key, value from metadata') if k.startswith('capture.page_fault')}
    steps = [{'number': n, 'ts': ts, 'dur': dur, 'records': r} for n, ts, dur, r in query(aiprof, path, STEP_FAULTS)]
    total = query(aiprof, path, "select count(*) from instants where category = 'aiprof_page_fault'")[0][0]
    if total == 0:
        sys.exit('%s holds no page fault records (capture.page_faults = %s)' % (path, meta.get('capture.page_faults')))
    return {'meta': meta, 'steps': steps, 'records': total,
            'period': int(meta.get('capture.page_faults.period', 1)),
            'cost': float(meta['capture.page_fault_cost_ns']) if 'capture.page_fault_cost_ns' in meta else None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--aiprof', required=True)
    ap.add_argument('--a', required=True)
    ap.add_argument('--b', required=True)
    ap.add_argument('--html', required=True)
    ap.add_argument('--hostile', action='store_true')
    a = ap.parse_args()
    out_dir = os.path.dirname(os.path.abspath(a.html))
    os.makedirs(out_dir, exist_ok=True)
    b_input = a.b
    if a.hostile:
        exported = os.path.join(out_dir, 'diff_faults_b.json')
        run([a.aiprof, 'export', a.b, '--format', 'chrome-json', '-o', exported])
        with open(exported) as f:
            trace = json.load(f)
        events = trace['traceEvents'] if isinstance(trace, dict) else trace
        faults = [e for e in events if e.get('ph') == 'i' and e.get('cat') == 'aiprof_page_fault']
        mid = faults[len(faults) // 2]
        for k in range(3):
            events.append({'ph': 'i', 's': 't', 'name': HOSTILE, 'cat': '<b>' + HOSTILE + '</b>', 'pid': mid['pid'],
                           'tid': mid['tid'], 'ts': mid['ts'] + k})
        b_input = os.path.join(out_dir, 'diff_faults_b_hostile.json')
        with open(b_input, 'w') as f:
            json.dump({'traceEvents': events}, f)
    expected = {'a': describe(a.aiprof, a.a), 'b': describe(a.aiprof, b_input), 'hostile': a.hostile,
                'hostile_name': HOSTILE}
    sidecar = 'diff_faults_expected_%s.json' % os.path.splitext(os.path.basename(a.html))[0]
    with open(os.path.join(out_dir, sidecar), 'w') as f:
        json.dump(expected, f)
    r = subprocess.run([a.aiprof, 'diff', a.a, b_input, '--timeline', a.html,
                        '-o', os.path.splitext(a.html)[0] + '.txt'])
    sys.exit(r.returncode)


if __name__ == '__main__':
    main()
