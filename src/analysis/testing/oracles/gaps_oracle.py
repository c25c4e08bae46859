#!/usr/bin/env python3
"""Independent oracle for src/analysis/gaps: reads the trace JSON directly.

Prints busy/idle/compute/memcpy ns and idle ns per gap cause for each device
(or, for CPU-only traces, the main thread). Definitions: docs/analyses.md.
With --steps, also the window figures over all ProfilerStep#N spans (no
warm-up left out): busy and idle per cause inside the steps, idle before the
first and after the last activity included (the window idle of
docs/analyses.md), in total and per step.
Usage: gaps_oracle.py TRACE.json[.gz] [--steps]
"""
import gzip, json, sys
from decimal import Decimal
from collections import defaultdict


def load(path):
    op = gzip.open if path.endswith('.gz') else open
    d = json.load(op(path), parse_float=Decimal)
    return d['traceEvents'] if isinstance(d, dict) else d


def merge(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(m):
    return sum(b - a for a, b in m)


def overlaps(merged, a, b):
    return any(x < b and y > a for x, y in merged)


def is_sync(name):
    n = name.lower()
    if 'wait' in n:
        return False
    # A synchronous copy call (memcpy, not async) waits as a sync does.
    return 'synchronize' in n or name in ('Stream Sync', 'Context Sync', 'Event Sync') or \
        ('memcpy' in n and 'async' not in n)


def covered(merged, a, b):
    return sum(max(0, min(b, y) - max(a, x)) for x, y in merged)


def startup_work(ev, ns, busy):
    """The host's start-up work (src/analysis/window/startup_work.h), merged:
    stream capture windows (a *StreamBeginCapture call's end to its thread's
    *StreamEndCapture start) and start-up calls (runtime/driver calls of at
    least 1 ms and 20 x their name's median, the device busy for less than
    half of them; the window's copy and sync exceptions are left out)."""
    calls = sorted((e for e in ev if e.get('cat') in ('cuda_runtime', 'Runtime', 'cuda_driver')),
                   key=lambda e: (e.get('pid'), e.get('tid'), ns(e['ts'])))
    windows, open_since, by_name = [], {}, defaultdict(list)
    for e in calls:
        key = (e.get('pid'), e.get('tid'))
        by_name[e['name']].append(ns(e['dur']))
        if 'StreamBeginCapture' in e['name']:
            open_since[key] = ns(e['ts']) + ns(e['dur'])
        elif 'StreamEndCapture' in e['name'] and key in open_since:
            windows.append([open_since.pop(key), ns(e['ts'])])
    for e in calls:
        a, d = ns(e['ts']), ns(e['dur'])
        v = sorted(by_name[e['name']])
        med = (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2
        if d >= 1_000_000 and d >= 20 * med and 2 * covered(busy, a, a + d) < d:
            windows.append([a, a + d])
    return merge(windows)


def main():
    ev = [e for e in load(sys.argv[1]) if e.get('ph') == 'X']
    ns = lambda v: int(Decimal(v) * 1000)
    dev_cats = {'kernel': 'compute', 'gpu_memcpy': 'memcpy', 'gpu_memset': 'memcpy', 'Kernel': 'compute',
                'Memcpy': 'memcpy', 'Memset': 'memcpy'}
    acts = defaultdict(list)
    launch_ts = {}
    for e in ev:
        c = e.get('cat')
        if c in ('cuda_runtime', 'Runtime', 'cuda_driver') and 'correlation' in e.get('args', {}):
            launch_ts[e['args']['correlation']] = ns(e['ts'])
    for e in ev:
        c = e.get('cat')
        if c in dev_cats:
            cls = dev_cats[c]
            if cls == 'compute' and any(k in e['name'] for k in ('nccl', 'Nccl', 'hccl', 'rccl')):
                cls = 'comm'
            acts[e['args'].get('device', e['pid'])].append((ns(e['ts']), ns(e['ts']) + ns(e['dur']), cls, e))
    sync = merge([[ns(e['ts']), ns(e['ts']) + ns(e['dur'])] for e in ev
                  if e.get('cat') in ('cuda_runtime', 'Runtime', 'cuda_sync') and is_sync(e['name'])])
    loading = merge([[ns(e['ts']), ns(e['ts']) + ns(e['dur'])] for e in ev if 'dataloader' in e['name'].lower()
                     and e.get('cat') not in dev_cats])
    cpu_only = not acts
    busy_all = merge([[x, y] for a in acts.values() for x, y, _, _ in a])
    startup = [] if cpu_only else startup_work(ev, ns, busy_all)
    if cpu_only:
        by_tid = defaultdict(list)
        for e in ev:
            if e.get('cat') == 'cpu_op':
                by_tid[(e['pid'], e['tid'])].append((ns(e['ts']), ns(e['ts']) + ns(e['dur']), 'compute', e))
        main_tid = max(by_tid, key=lambda k: length(merge([[a, b] for a, b, _, _ in by_tid[k]])))
        acts = {'main': by_tid[main_tid]}
    for dev, a in sorted(acts.items(), key=lambda kv: str(kv[0])):
        m = merge([[x, y] for x, y, _, _ in a])
        starts = sorted(a, key=lambda t: (t[0], -t[1]))
        span = m[-1][1] - m[0][0]
        causes = defaultdict(int)
        for (a0, a1), (b0, b1) in zip(m, m[1:]):
            nxt = next(t for t in starts if t[0] == b0)
            corr = nxt[3].get('args', {}).get('correlation')
            if 2 * covered(startup, a1, b0) >= b0 - a1:
                causes['startup'] += b0 - a1
            elif overlaps(loading, a1, b0):
                causes['data_loading'] += b0 - a1
            elif not cpu_only and overlaps(sync, a1, b0):
                causes['sync'] += b0 - a1
            elif not cpu_only and corr in launch_ts and launch_ts[corr] >= a1:
                causes['host_bound'] += b0 - a1
            else:
                causes['other'] += b0 - a1
        per = {k: length(merge([[x, y] for x, y, c, _ in a if c == k])) for k in ('compute', 'comm', 'memcpy')}
        cu = merge([[x, y] for x, y, c, _ in a if c == 'compute'])
        mu = merge([[x, y] for x, y, c, _ in a if c == 'comm'])
        per['comm_overlap'] = sum(max(0, min(y1, y2) - max(x1, x2)) for x1, y1 in cu for x2, y2 in mu)
        print(json.dumps({'device': str(dev), 'span_ns': span, 'busy_ns': length(m), 'gaps': len(m) - 1,
                          **{k + '_ns': v for k, v in per.items()},
                          **{'idle_' + k + '_ns': v for k, v in sorted(causes.items())}}))
        if '--steps' in sys.argv[2:]:
            window_by_steps(ev, ns, m, starts, launch_ts, loading, sync, cpu_only, dev, startup)


def window_by_steps(ev, ns, m, starts, launch_ts, loading, sync, cpu_only, dev, startup=()):
    steps = merge([[ns(e['ts']), ns(e['ts']) + ns(e['dur'])] for e in ev if e['name'].startswith('ProfilerStep#')])
    n_steps = sum(1 for e in ev if e['name'].startswith('ProfilerStep#'))
    inside = lambda a, b: sum(max(0, min(b, y) - max(a, x)) for x, y in steps)
    lo, hi = min(steps[0][0], m[0][0]), max(steps[-1][1], m[-1][1])
    # Idle intervals of [lo, hi): before the first activity, between
    # activities, after the last; each with the activity that ends it.
    idle = [(lo, m[0][0], m[0][0])] + [(a1, b0, b0) for (_, a1), (b0, _) in zip(m, m[1:])] + [(m[-1][1], hi, None)]
    causes = defaultdict(int)
    for a, b, nxt_start in idle:
        if b <= a:
            continue
        corr = None
        if nxt_start is not None:
            corr = next(t for t in starts if t[0] == nxt_start)[3].get('args', {}).get('correlation')
        if 2 * covered(startup, a, b) >= b - a:
            c = 'startup'
        elif overlaps(loading, a, b):
            c = 'data_loading'
        elif not cpu_only and overlaps(sync, a, b):
            c = 'sync'
        elif not cpu_only and corr in launch_ts and launch_ts[corr] >= a:
            c = 'host_bound'
        else:
            c = 'other'
        causes[c] += inside(a, b)
    busy = sum(inside(a, b) for a, b in m)
    print(json.dumps({'device': str(dev), 'steps': n_steps, 'window_ns': length(steps), 'window_busy_ns': busy,
                      **{'window_idle_' + k + '_ns': v for k, v in sorted(causes.items())},
                      **{'window_idle_' + k + '_ns_per_step': v / n_steps for k, v in sorted(causes.items())}}))


if __name__ == '__main__':
    main()
