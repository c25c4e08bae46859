#!/usr/bin/env python3
"""Independent oracle for src/analysis/{launches,memcpy,memory,long_tail}.

Reads the trace JSON directly; correlation args link runtime calls to device
activity. Prints kernels, launches, launch-delay p50, launch cost, short
kernels, copies per direction, pageable count, memory peaks and, per op
name and shape (grid, block and the launching op's Input Dims; Input Dims), p50/p99/tail share (3x median). Definitions: docs/analyses.md.
"""
import json, sys
from collections import defaultdict
from decimal import Decimal

from oracle_common import load_events, q


def main():
    path = sys.argv[1]
    ev = load_events(path)
    ns = lambda v: int(Decimal(v) * 1000)
    X = [e for e in ev if e.get('ph') == 'X']
    calls = {e['args']['correlation']: e for e in X
             if e.get('cat') in ('cuda_runtime', 'Runtime', 'cuda_driver') and 'correlation' in e.get('args', {})}
    kernels = [e for e in X if e.get('cat') in ('kernel', 'Kernel')]
    delays, costs = [], []
    for k in kernels:
        c = calls.get(k['args'].get('correlation'))
        if c:
            delays.append(ns(k['ts']) - ns(c['ts']) - ns(c['dur']))
            costs.append(ns(c['dur']))
    cost = q(costs, 0.5)
    # A start 100 us or more after the call returned is the device holding
    # the work, not launch latency (kMinLaunchHoldNs): counted apart.
    held = [d for d in delays if d >= 100000]
    unheld = [d for d in delays if d < 100000]
    out = {'kernels': len(kernels), 'launches': len(delays), 'delay_p50': q(unheld, 0.5) if unheld else None,
           'held': len(held), 'held_p50': q(held, 0.5) if held else None, 'held_max': max(held) if held else None,
           'launch_cost': cost,
           'short': sum(1 for k in kernels if ns(k['dur']) < cost) if costs else 0}
    copies = defaultdict(lambda: [0, 0, 0])
    for e in X:
        if e.get('cat') in ('gpu_memcpy', 'Memcpy'):
            n = e['name']
            dr = next((x for x in ('HtoD', 'DtoH', 'DtoD', 'PtoP') if x in n), 'other')
            copies[dr][0] += 1
            copies[dr][1] += e.get('args', {}).get('bytes', 0)
            copies[dr][2] += ns(e['dur'])
    out['copies'] = dict(copies)
    out['pageable'] = sum(1 for e in X if e.get('cat') in ('gpu_memcpy', 'Memcpy') and 'Pageable' in e['name'])
    peaks = {}
    for e in ev:
        a = e.get('args', {})
        if e.get('ph') == 'i' and 'Total Allocated' in a:
            k = (a.get('Device Type', 0), a.get('Device Id', -1))
            p = peaks.setdefault(k, [None, 0, 0])
            if p[0] is None or a['Total Allocated'] > p[0]:
                p[0], p[1] = a['Total Allocated'], ns(e['ts'])
            p[2] = max(p[2], a.get('Total Reserved', 0))
    out['memory'] = {str(k): v for k, v in peaks.items()}
    dev = [e for e in X if e.get('cat') in ('kernel', 'Kernel', 'gpu_memcpy', 'Memcpy', 'gpu_memset', 'Memset')]
    ops = dev if dev else [e for e in X if e.get('cat') == 'cpu_op']
    # Per name and shape: a kernel's launch configuration (grid, block) and
    # its launching op's input sizes (the innermost cpu_op around the runtime
    # call), an op's input sizes (Input Dims), where recorded.
    cpu_ops = defaultdict(list)
    for e in X:
        if e.get('cat') == 'cpu_op':
            cpu_ops[(e['pid'], e['tid'])].append(e)
    for v in cpu_ops.values():
        v.sort(key=lambda e: (ns(e['ts']), -ns(e['dur'])))

    def op_dims(k):
        c = calls.get(k.get('args', {}).get('correlation'))
        if c is None:
            return None
        start, end = ns(c['ts']), ns(c['ts']) + ns(c['dur'])
        inner = None
        for o in cpu_ops.get((c['pid'], c['tid']), []):
            if ns(o['ts']) > start:
                break
            if ns(o['ts']) + ns(o['dur']) >= end:
                inner = o
        return None if inner is None else inner.get('args', {}).get('Input Dims')

    by = defaultdict(list)
    for e in ops:
        a = e.get('args', {})
        if dev:
            shape = (json.dumps(a.get('grid')), json.dumps(a.get('block')), json.dumps(op_dims(e)))
        else:
            shape = (json.dumps(a.get('Input Dims')),)
        by[(e['name'],) + shape].append(ns(e['dur']))
    total = sum(sum(v) for v in by.values())
    best = None
    for n, v in by.items():
        med = q(v, 0.5)
        tail = sum(x for x in v if x > 3 * med)
        share = tail / sum(v) if sum(v) else 0
        if len(v) >= 5 and sum(v) >= 0.01 * total and (best is None or share > best[1]):
            best = (n, share)
    out['long_tail'] = best
    print(json.dumps(out, default=str))


if __name__ == '__main__':
    main()
