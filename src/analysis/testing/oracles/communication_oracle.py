#!/usr/bin/env python3
"""Independent oracle for src/analysis/communication: reads the raw files.

  communication_oracle.py ascend RANK0_TRACE_VIEW.json RANK1_TRACE_VIEW.json
      HCCL group tasks ("Group N Communication" threads of the HCCL process)
      of two torch_npu ranks, matched by order: per rank wait / lateness /
      transfer in ns (definitions: src/analysis/communication/cross_rank.h).
  communication_oracle.py nccl KINETO.json.gz
      Kineto NCCL kernels: per collective name count, total ns, bytes
      (max(In, Out msg nelems) x dtype size), algbw GB/s.
  communication_oracle.py gloo KINETO.json.gz
      CPU-only (gloo) traces: "gloo:*" host spans: count, total and
      longest ns, and their time inside each ProfilerStep.
Timestamps are parsed as Decimal (exact) and converted to integer ns.
"""
import gzip, json, sys
from collections import defaultdict
from decimal import Decimal, ROUND_HALF_UP

DTYPE = {'Float': 4, 'Half': 2, 'BFloat16': 2, 'Long': 8, 'Int': 4, 'Double': 8, 'Byte': 1, 'Char': 1}


def load(path):
    op = gzip.open if path.endswith('.gz') else open
    d = json.load(op(path), parse_float=Decimal)
    return d['traceEvents'] if isinstance(d, dict) else d


def ns(us):
    # Rounded half away from zero, as aiprof's exact decimal parser does.
    return int((Decimal(str(us)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def hccl_tasks(path):
    ev = load(path)
    procs = {e['pid'] for e in ev if e.get('ph') == 'M' and e['name'] == 'process_name' and e['args']['name'] == 'HCCL'}
    threads = {(e['pid'], e['tid']) for e in ev if e.get('ph') == 'M' and e['name'] == 'thread_name'
               and e['pid'] in procs and e['args']['name'].endswith('Communication')}
    out = [(ns(e['ts']), ns(e['ts']) + ns(e['dur'])) for e in ev
           if e.get('ph') == 'X' and (e['pid'], e['tid']) in threads]
    return sorted(out)


def ascend(paths):
    ranks = [hccl_tasks(p) for p in paths]
    n = min(len(r) for r in ranks)
    totals = [defaultdict(int) for _ in ranks]
    for i in range(n):
        starts = [r[i][0] for r in ranks]
        first, last = min(starts), max(starts)
        for k, r in enumerate(ranks):
            totals[k]['wait'] += last - r[i][0]
            totals[k]['lateness'] += r[i][0] - first
            totals[k]['transfer'] += max(0, r[i][1] - last)
            totals[k]['comm'] += r[i][1] - r[i][0]
    for k, t in enumerate(totals):
        print(f"rank{k} matched={n} " + ' '.join(f"{key}_ns={v}" for key, v in sorted(t.items())))


def nccl(path):
    by = defaultdict(lambda: [0, 0, 0])
    for e in load(path):
        if e.get('cat') != 'kernel' or not e['name'].startswith('nccl'):
            continue
        a = e['args']
        b = by[a['Collective name']]
        b[0] += 1
        b[1] += ns(e['dur'])
        b[2] += max(a['In msg nelems'], a['Out msg nelems']) * DTYPE[a['dtype']]
    for name, (count, dur, nbytes) in sorted(by.items()):
        print(f"{name} count={count} total_ns={dur} bytes={nbytes} algbw_GBps={nbytes / dur:.6f}")


def gloo(path):
    ev = [e for e in load(path) if e.get('ph') == 'X']
    spans = sorted((ns(e['ts']), ns(e['ts']) + ns(e['dur'])) for e in ev if e['name'].startswith('gloo:'))
    print(f"gloo count={len(spans)} total_ns={sum(b - a for a, b in spans)} max_ns={max(b - a for a, b in spans)}")
    merged = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    for e in ev:
        if e['name'].startswith('ProfilerStep#'):
            s0, s1 = ns(e['ts']), ns(e['ts']) + ns(e['dur'])
            inside = sum(max(0, min(b, s1) - max(a, s0)) for a, b in merged)
            print(f"{e['name']} step_ns={s1 - s0} comm_ns={inside}")


if __name__ == '__main__':
    {'ascend': lambda: ascend(sys.argv[2:]), 'nccl': lambda: nccl(sys.argv[2]),
     'gloo': lambda: gloo(sys.argv[2])}[sys.argv[1]]()
