#!/usr/bin/env python3
"""Independent oracle for src/analysis/fusion on CPU-only PyTorch traces.

Top-level cpu_ops per thread in time order, runs of ops shorter than
500 us, windows of 2..8 op names (tuples, no hashing) counted greedily
without overlap; candidates with >= 3 occurrences ranked by
occurrences*(len-1), then total time. When the file has ProfilerStep#N
windows, runs never span two of them and ops outside all of them break
runs. A candidate overlapping a better-ranked one (containment, or a shifted
overlap of all but one op of the shorter) with at least 2/3 of its
occurrences is skipped. Prints op time, short-op time, the top 5 and the op
time they cover.
"""
import json, sys
from collections import defaultdict
from decimal import Decimal

SHORT_NS, MINLEN, MAXLEN, MINOCC, TOP = 500_000, 2, 8, 3, 5


def main():
    d = json.load(open(sys.argv[1]), parse_float=Decimal)
    ev = [e for e in (d['traceEvents'] if isinstance(d, dict) else d) if e.get('ph') == 'X']
    ns = lambda v: int(Decimal(v) * 1000)
    by_tid = defaultdict(list)
    for e in ev:
        by_tid[(str(e['pid']), str(e['tid']))].append(e)
    steps = sorted((ns(e['ts']), ns(e['ts']) + ns(e['dur'])) for e in ev if e['name'].startswith('ProfilerStep#'))

    def step_of(t):
        for k, (a, b) in enumerate(steps):
            if a <= t < b:
                return k
        return None

    runs, op_time, short_time = [], 0, 0
    for key in sorted(by_tid, key=lambda k: min(ns(e['ts']) for e in by_tid[k])):
        evs = sorted(by_tid[key], key=lambda e: (ns(e['ts']), -ns(e['dur'])))
        stack, tops = [], []
        for e in evs:
            end = ns(e['ts']) + ns(e['dur'])
            while stack and not (ns(stack[-1]['ts']) + ns(stack[-1]['dur']) >= end):
                stack.pop()
            if e.get('cat') == 'cpu_op' and not any(p.get('cat') == 'cpu_op' for p in stack):
                tops.append(e)
            stack.append(e)
        run, prev_step = [], 'start'
        for e in tops:
            op_time += ns(e['dur'])
            st = step_of(ns(e['ts']))
            if st != prev_step and run:
                runs.append(run)
                run = []
            prev_step = st
            if steps and st is None:
                short_time += ns(e['dur']) if ns(e['dur']) < SHORT_NS else 0
                continue
            if ns(e['dur']) >= SHORT_NS:
                if run: runs.append(run)
                run = []
                continue
            short_time += ns(e['dur'])
            run.append(e)
        if run: runs.append(run)
    acc = {}
    order = 0
    for run in runs:
        for i in range(len(run)):
            for L in range(MINLEN, min(MAXLEN, len(run) - i) + 1):
                k = tuple(e['name'] for e in run[i:i + L])
                a = acc.setdefault(k, {'occ': 0, 'total': 0, 'next': None, 'first': order + i})
                if a['next'] is not None and a['next'] > (id(run), i)[1] and a['run'] is run:
                    continue
                a['occ'] += 1
                a['total'] += sum(ns(e['dur']) for e in run[i:i + L])
                a['next'], a['run'] = i + L, run
        order += len(run)
    ordered = sorted((k for k in acc if acc[k]['occ'] >= MINOCC),
                     key=lambda k: (-acc[k]['occ'] * (len(k) - 1), -acc[k]['total'], acc[k]['first']))

    def overlap(x, y):
        need = max(1, min(len(x), len(y)) - 1)
        for shift in range(-(len(x) - 1), len(y)):
            lo, hi = max(0, shift), min(len(y), shift + len(x))
            if hi - lo >= need and all(y[k] == x[k - shift] for k in range(lo, hi)):
                return True
        return False

    ranked, seen = [], []
    for k in ordered:
        if len(ranked) == TOP:
            break
        if not any(3 * acc[b]['occ'] >= 2 * acc[k]['occ'] and overlap(k, b) for b in seen):
            ranked.append(k)
        seen.append(k)
    covered = set()
    for k in ranked:
        for run in runs:
            i = 0
            while i + len(k) <= len(run):
                if tuple(e['name'] for e in run[i:i + len(k)]) == k:
                    covered.update(id(e) for e in run[i:i + len(k)])
                    i += len(k)
                else:
                    i += 1
    cov_ns = sum(ns(e['dur']) for run in runs for e in run if id(e) in covered)
    print(json.dumps({'op_time_ns': op_time, 'short_op_ns': short_time, 'covered_ns': cov_ns,
                      'top': [[list(k), acc[k]['occ'], acc[k]['total']] for k in ranked]}, indent=1))


if __name__ == '__main__':
    main()
