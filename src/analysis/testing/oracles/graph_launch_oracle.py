#!/usr/bin/env python3
"""Independent oracle for the graph-launch figures of src/analysis/launches.

Reads the trace JSON directly; the `correlation` arg links a runtime call to
the device activity it launched (a cudaGraphLaunch/hipGraphLaunch shares its
correlation with every kernel it replays). Per launch call: calls,
graph launches, kernels replayed by graphs, median graph-launch duration,
median one-by-one launch duration, one-by-one kernels shorter than it, the
median device gap between consecutive replays on a stream, the per-call
delay p50 (first kernel start - call end). Definitions: docs/analyses.md.
Usage: graph_launch_oracle.py TRACE
"""
import json, sys
from decimal import Decimal

from oracle_common import load_events, q


def main():
    path = sys.argv[1]
    ev = load_events(path)
    ns = lambda v: int(Decimal(v) * 1000)
    X = [e for e in ev if e.get('ph') == 'X']
    calls = {e['args']['correlation']: e for e in X
             if e.get('cat') in ('cuda_runtime', 'cuda_driver') and 'correlation' in e.get('args', {})}
    tasks = [e for e in X if e.get('cat') == 'kernel']
    by_call = {}
    for k in tasks:
        c = k['args'].get('correlation')
        if c in calls:
            by_call.setdefault(c, []).append(k)
    graph = {c for c in by_call if 'GraphLaunch' in calls[c]['name']}
    delays, one_costs, graph_costs, replays = [], [], [], []
    for c, ks in by_call.items():
        call = calls[c]
        first = min(ns(k['ts']) for k in ks)
        last = max(ns(k['ts']) + ns(k['dur']) for k in ks)
        delays.append(first - ns(call['ts']) - ns(call['dur']))
        if c in graph:
            graph_costs.append(ns(call['dur']))
            fk = min(ks, key=lambda k: ns(k['ts']))
            replays.append(((fk['pid'], fk['tid']), first, last))
        else:
            one_costs.append(ns(call['dur']))
    cost = q(one_costs, 0.5)
    short = sum(1 for c, ks in by_call.items() if c not in graph for k in ks if ns(k['dur']) < cost) if one_costs else 0
    replays.sort()
    gaps = [b[1] - a[2] for a, b in zip(replays, replays[1:]) if a[0] == b[0] and b[1] >= a[2]]
    print(json.dumps({'kernels': len(tasks), 'launch_calls': len(by_call), 'graph_launches': len(graph),
                      'graph_kernels': sum(len(by_call[c]) for c in graph), 'graph_launch_cost': q(graph_costs, 0.5),
                      'launch_cost': cost, 'short': short,
                      # 100 us or more after the call returned: the device's hold (kMinLaunchHoldNs).
                      'delay_p50': q([d for d in delays if d < 100000], 0.5) if any(d < 100000 for d in delays) else None,
                      'held': sum(1 for d in delays if d >= 100000),
                      'held_p50': q([d for d in delays if d >= 100000], 0.5) if any(d >= 100000 for d in delays) else None,
                      'graph_gaps': len(gaps), 'graph_gap_p50': q(gaps, 0.5)}))


if __name__ == '__main__':
    main()
