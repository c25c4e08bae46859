#!/usr/bin/env python3
"""Independent oracle for src/analysis/llm (prefill/decode phases).

Reads the trace JSON directly. Step annotations: SGLang "step[MODE bs=B
toks=T]" and vLLM "execute_T_context_N(...)_generation_M(...)". A device
activity (kernel, gpu_memcpy, gpu_memset) belongs to the step whose span
holds the start of its launching runtime call (same `correlation`). A step's
wall time runs from its start, or from the previous step's work end when
that is later, to its own work end (the later of its span's end and its
activities' last end). Prints, per phase: steps, wall time, annotation span,
device time, tokens. Usage: llm_phases_oracle.py TRACE
"""
import gzip, json, re, sys
from decimal import Decimal


def phase(name):
    m = re.match(r'step\[(\w+) bs=(\d+) toks=(\d+)', name)
    if m:
        mode = {'EXTEND': 'prefill', 'PREFILL': 'prefill', 'DECODE': 'decode', 'MIXED': 'mixed'}.get(m.group(1))
        return (mode, int(m.group(3))) if mode else None
    m = re.match(r'execute_(\d+)_context_(\d+).*_generation_(\d+)', name)
    if m:
        t, c, g = map(int, m.groups())
        if c and g:
            return ('mixed', t)
        return ('prefill', t) if c else ('decode', t) if g else None
    return None


def main():
    path = sys.argv[1]
    d = json.load((gzip.open if path.endswith('.gz') else open)(path), parse_float=Decimal)
    ev = d['traceEvents'] if isinstance(d, dict) else d
    ns = lambda v: int(Decimal(v) * 1000)
    X = [e for e in ev if e.get('ph') == 'X']
    steps = []
    for e in X:
        if e.get('cat') == 'user_annotation' and phase(e['name']):
            p, t = phase(e['name'])
            steps.append((ns(e['ts']), ns(e['ts']) + ns(e['dur']), p, t))
    # Nested annotations of one step (SGLang writes both forms): keep the
    # outermost; but an annotation directly holding two or more step
    # annotations is a loop over steps, and its children are the steps.
    steps.sort(key=lambda s: (s[0], -s[1]))
    parent, children, open_ = [None] * len(steps), [0] * len(steps), []
    for i, s in enumerate(steps):
        while open_ and s[0] >= steps[open_[-1]][1]:
            open_.pop()
        if open_:
            parent[i] = open_[-1]
            children[open_[-1]] += 1
        open_.append(i)
    kept, covered = [], [False] * len(steps)
    for i, s in enumerate(steps):
        if parent[i] is not None and covered[parent[i]]:
            covered[i] = True
        elif children[i] < 2:
            kept.append(s)
            covered[i] = True
    steps = kept
    calls = {e['args']['correlation']: e for e in X
             if e.get('cat') in ('cuda_runtime', 'cuda_driver') and 'correlation' in e.get('args', {})}
    out = {}
    work_end = [s[1] for s in steps]
    device = [0] * len(steps)
    for e in X:
        if e.get('cat') not in ('kernel', 'gpu_memcpy', 'gpu_memset'):
            continue
        c = calls.get(e.get('args', {}).get('correlation'))
        if not c:
            continue
        for k, s in enumerate(steps):
            if s[0] <= ns(c['ts']) < s[1]:
                device[k] += ns(e['dur'])
                work_end[k] = max(work_end[k], ns(e['ts']) + ns(e['dur']))
                break
    for k, s in enumerate(steps):
        o = out.setdefault(s[2], {'steps': 0, 'wall': 0, 'span': 0, 'device': 0, 'tokens': 0})
        o['steps'] += 1
        start = max(s[0], work_end[k - 1]) if k > 0 else s[0]
        o['wall'] += max(0, work_end[k] - start)
        o['span'] += s[1] - s[0]
        o['device'] += device[k]
        o['tokens'] += s[3]
    print(json.dumps(out, sort_keys=True))


if __name__ == '__main__':
    main()
