#!/usr/bin/env python3
"""Independent oracle for src/analysis/layout on CPU-only PyTorch traces.

Rules (docs/analyses.md): a same-shape (rank >= 2) same-dtype aten::copy_
under aten::to/_to_copy/contiguous, or under an aten::clone called by
contiguous/flatten/reshape; count the outermost such op; share = its time
over top-level cpu_op time. Prints count, conversion ns, denominator ns and
groups (op, trigger, count, ns).
"""
import json, sys
from collections import defaultdict
from decimal import Decimal

CONV = {'aten::to', 'aten::_to_copy', 'aten::contiguous', 'aten::clone'}
CLONE_CALLERS = {'aten::contiguous', 'aten::flatten', 'aten::reshape'}


def main():
    d = json.load(open(sys.argv[1]), parse_float=Decimal)
    ev = [e for e in (d['traceEvents'] if isinstance(d, dict) else d) if e.get('ph') == 'X']
    ns = lambda v: int(Decimal(v) * 1000)
    by_tid = defaultdict(list)
    for e in ev:
        by_tid[(str(e['pid']), str(e['tid']))].append(e)
    total = conv_ns = count = 0
    groups = defaultdict(lambda: [0, 0])
    for evs in by_tid.values():
        evs.sort(key=lambda e: (ns(e['ts']), -ns(e['dur'])))
        parent, stack = {}, []
        for i, e in enumerate(evs):
            end = ns(e['ts']) + ns(e['dur'])
            while stack and not (ns(evs[stack[-1]]['ts']) + ns(evs[stack[-1]]['dur']) >= end):
                stack.pop()
            parent[i] = stack[-1] if stack else None
            stack.append(i)
        seen = set()
        for i, e in enumerate(evs):
            if e.get('cat') != 'cpu_op':
                continue
            p, top = parent[i], True
            while p is not None:
                top = top and evs[p].get('cat') != 'cpu_op'
                p = parent[p]
            if top:
                total += ns(e['dur'])
            if e['name'] != 'aten::copy_':
                continue
            dims, types = e['args'].get('Input Dims'), e['args'].get('Input type')
            if not dims or len(dims) < 2 or len(dims[0]) < 2 or dims[0] != dims[1] or types[0] != types[1]:
                continue
            outer, p = None, parent[i]
            while p is not None and evs[p]['name'] in CONV:
                if evs[p]['name'] == 'aten::clone':
                    c = parent[p]
                    if c is None or evs[c]['name'] not in CLONE_CALLERS:
                        break
                outer, p = p, parent[p]
            if outer is None or outer in seen:
                continue
            seen.add(outer)
            trig = evs[parent[outer]]['name'] if parent[outer] is not None else ''
            if trig.startswith('ProfilerStep#'):
                trig = 'ProfilerStep#*'
            g = groups[(evs[outer]['name'], trig)]
            g[0] += 1
            g[1] += ns(evs[outer]['dur'])
            count += 1
            conv_ns += ns(evs[outer]['dur'])
    print(json.dumps({'count': count, 'conversion_ns': conv_ns, 'denominator_ns': total,
                      'groups': sorted([[k[0], k[1], v[0], v[1]] for k, v in groups.items()])}))


if __name__ == '__main__':
    main()
