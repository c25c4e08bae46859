#!/usr/bin/env python3
"""Independent oracle for src/analysis/fusion on CPU-only PyTorch traces.

Reads the raw Chrome/Kineto JSON (plain or .gz) with Python's json module,
never aiprof's output. Top-level cpu_ops per thread in time order are cut
into runs:
  - an op of 500 us or more ends the run (shorter ones join); with
    --memory-bound-any-length (a rule measured and not shipped: docs/
    analyses.md, fusion, "Limit (CPU)") an op of a memory-bound class (elementwise,
    normalisation, reduction: the name patterns of
    src/analysis/attribution/op_class.h, re-read here in its documented
    order) joins a run whatever its duration;
  - when the file has ProfilerStep#N windows, a run never spans two of them
    and ops outside all of them break runs;
  - ops under a span whose name contains "dataloader" (any case, any depth)
    join no run and end the one open;
  - a stretch of 500 us or more without a top-level op between two run
    members ends the run, and so does the switch between forward ops and
    backward nodes (autograd::engine::evaluate_function...).
Windows of 2..8 op names (tuples, no hashing) are counted greedily without
overlap; candidates with >= 3 occurrences ranked by occurrences*(len-1),
then total time. A candidate overlapping a better-ranked one (containment,
or a shifted overlap of all but one op of the shorter) with at least 2/3 of
its occurrences is skipped. Savings: per occurrence, gaps between its ops +
its op time - its longest op; the union counts, best-ranked candidate
first, an occurrence only where none of its ops is counted already.

Prints JSON: op time, short-op time (ops < 500 us), the long memory-bound
ops that joined runs, the top 5 (names, occurrences, op time, gaps,
saving), the op time they cover, and the union saving over all steps and
over the steady steps (--warmup W leaves the first W ProfilerSteps out,
as aiprof's metric warmup_steps says; per step = / steady steps).

--cap-tails (an estimate tried, not aiprof's): a member longer than 3x the
median of its op (name and Input Dims, over run members) counts at that
median.

Scope: Kineto JSON with cat "cpu_op" events; steps from ProfilerStep#N
only (aiprof also finds steps from a repeating pattern where a file has no
markers: test/data/periodic; there the figures differ). A file without
cpu_op events is an error (exit 1), never zeros.

Usage: fusion_oracle.py TRACE [--warmup W] [--memory-bound-any-length] [--cap-tails]
"""
import gzip
import json
import sys
from collections import defaultdict
from decimal import Decimal

SHORT_NS, MINLEN, MAXLEN, MINOCC, TOP = 500_000, 2, 8, 3, 5

# op_class.h, in the order it checks them (the first that matches wins).
ATTENTION = ["attention", "sdpa", "flash", "fmha", "_mha", "multi_head", "attn_fwd", "attn_bwd", "sage_fwd",
             "sage_bwd", "sage_quant", "sageattn"]
CONV = ["conv", "winograd", "implicit_gemm", "implicit_convolve", "dgrad", "wgrad", "fprop", "xmma_fprop"]
NORM = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "batchnorm", "layernorm", "groupnorm",
        "rmsnorm", "bn_fw", "bn_bw", "bn_", "welford"]
GEMM = ["gemm", "matmul", "cutlass", "cublas", "addmm", "baddbmm", "bmm", "linear", "_mm", "einsum", "gemv", "dot",
        "cijk_", "nvjet"]
MOVE = ["copy", "cat", "clone", "contiguous", "index", "gather", "scatter", "memcpy", "memset", "fill", "zero",
        "stack", "embedding", "transpose", "permute", "pad", "to_copy", "reshape", "expand", "repeat", "split",
        "slice", "narrow", "select", "view", "flatten", "empty", "resize"]
REDUCE = ["sum", "mean", "softmax", "loss", "nll", "pool", "reduce", "argmax", "argmin", "norm", "max", "min",
          "cumsum", "var", "std"]
ELEMENTWISE = ["add", "mul", "div", "sub", "relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "threshold",
               "dropout", "where", "clamp", "elementwise", "foreach", "addcmul", "addcdiv", "sqrt", "rsqrt", "pow",
               "neg", "abs", "hardtanh", "leaky", "elu", "erf", "sin", "cos", "mish", "swish", "lerp", "sign",
               "masked_fill", "bitwise", "maximum", "minimum", "unrolled", "vectorized"]


def word_op(base, op):
    if base.startswith('_'):
        base = base[1:]
    return base.startswith(op) and (len(base) == len(op) or base[len(op)] in '_.')


def op_class(name):
    s = name[:256].lower()
    if s.startswith('torch-compiled region') or s.startswith('compiledfunction'):
        return 'other'
    base = s[s.rfind('::') + 2:] if '::' in s else s
    if s.startswith('triton_poi_'):
        return 'elementwise'
    if s.startswith(('triton_red_', 'triton_per_')):
        return 'normalisation' if 'norm' in s else 'reduction'
    if s.startswith('triton_tem_'):
        return 'convolution' if 'conv' in s else 'gemm'
    has = lambda parts: any(p in s for p in parts)
    if has(ATTENTION):
        return 'attention'
    if has(CONV):
        return 'convolution'
    if has(NORM):
        return 'normalisation'
    if has(GEMM) or word_op(base, 'mm') or word_op(base, 'mv'):
        return 'gemm'
    if 'rotary' in s:
        return 'elementwise'
    if word_op(base, 'to') or word_op(base, 't') or has(MOVE):
        return 'data movement'
    if has(REDUCE):
        return 'reduction'
    if has(ELEMENTWISE) or any(word_op(base, op) for op in ('eq', 'ne', 'lt', 'gt', 'le', 'ge')):
        return 'elementwise'
    return 'other'


def memory_bound(name):
    return op_class(name) in ('elementwise', 'normalisation', 'reduction')


def shape_key(e):
    return e['name'], json.dumps(e.get('args', {}).get('Input Dims'))


def load(path):
    with (gzip.open(path, 'rt') if path.endswith('.gz') else open(path)) as f:
        d = json.load(f, parse_float=Decimal)
    return [e for e in (d['traceEvents'] if isinstance(d, dict) else d) if e.get('ph') == 'X']


def ns(v):
    return int(Decimal(v) * 1000)


def main():
    args = sys.argv[1:]
    warmup = 0
    cap_tails = '--cap-tails' in args
    any_length = '--memory-bound-any-length' in args
    args = [a for a in args if a not in ('--cap-tails', '--memory-bound-any-length')]
    if '--warmup' in args:
        k = args.index('--warmup')
        warmup = int(args[k + 1])
        del args[k:k + 2]
    ev = load(args[0])
    by_tid = defaultdict(list)
    for e in ev:
        by_tid[(str(e['pid']), str(e['tid']))].append(e)
    steps = sorted((ns(e['ts']), ns(e['ts']) + ns(e['dur'])) for e in ev if e['name'].startswith('ProfilerStep#'))

    def step_of(t):
        for k, (a, b) in enumerate(steps):
            if a <= t < b:
                return k
        return None

    runs, op_time, short_time, long_mb, long_mb_ns = [], 0, 0, 0, 0
    for key in sorted(by_tid, key=lambda k: min(ns(e['ts']) for e in by_tid[k])):
        evs = sorted(by_tid[key], key=lambda e: (ns(e['ts']), -ns(e['dur'])))
        stack, tops = [], []
        for e in evs:
            end = ns(e['ts']) + ns(e['dur'])
            while stack and not (ns(stack[-1]['ts']) + ns(stack[-1]['dur']) >= end):
                stack.pop()
            loader = 'dataloader' in e['name'].lower() or any('dataloader' in p['name'].lower() for p in stack)
            if e.get('cat') == 'cpu_op' and not any(p.get('cat') == 'cpu_op' for p in stack):
                tops.append((e, loader))
            stack.append(e)
        run, prev_step, prev_end, prev_bwd = [], 'start', 0, False

        def close():
            nonlocal run
            if run:
                runs.append(run)
            run = []

        for e, loader in tops:
            dur = ns(e['dur'])
            op_time += dur
            st = step_of(ns(e['ts']))
            if st != prev_step:
                close()
            prev_step = st
            if (steps and st is None) or loader:
                short_time += dur if dur < SHORT_NS else 0
                if loader:
                    close()
                continue
            if dur >= SHORT_NS and not (any_length and memory_bound(e['name'])):
                close()
                continue
            if dur < SHORT_NS:
                short_time += dur
            else:
                long_mb += 1
                long_mb_ns += dur
            bwd = e['name'].startswith('autograd::engine::evaluate_function')
            if run and (ns(e['ts']) - prev_end >= SHORT_NS or bwd != prev_bwd):
                close()
            prev_bwd = bwd
            run.append(e)
            prev_end = ns(e['ts']) + dur
        close()

    if op_time == 0:
        # The legacy profiler's JSON (no cat "cpu_op") or a device-only file:
        # not what this oracle reads; zeros would look like an answer.
        sys.exit(f'{args[0]}: no cpu_op events with a duration (the oracle reads Kineto CPU traces)')

    def gaps(es):
        return sum(max(0, ns(es[j]['ts']) - ns(es[j - 1]['ts']) - ns(es[j - 1]['dur'])) for j in range(1, len(es)))

    # --cap-tails: a member longer than 3x the median of its op (name and
    # Input Dims, over the run members) counts at that median (its excess
    # is a tail, long_tail_ops' to report).
    med = {}
    if cap_tails:
        groups = defaultdict(list)
        for run in runs:
            for e in run:
                groups[shape_key(e)].append(ns(e['dur']))
        for k, v in groups.items():
            v.sort()
            n = len(v)
            med[k] = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2

    def member_ns(e):
        d = ns(e['dur'])
        return med[shape_key(e)] if cap_tails and d > 3 * med[shape_key(e)] else d

    def saving(es):
        d = [member_ns(e) for e in es]
        return gaps(es) + sum(d) - max(d)

    acc, order = {}, 0
    for r, run in enumerate(runs):
        for i in range(len(run)):
            for L in range(MINLEN, min(MAXLEN, len(run) - i) + 1):
                k = tuple(e['name'] for e in run[i:i + L])
                a = acc.setdefault(k, {'occ': 0, 'total': 0, 'gaps': 0, 'first': order + i, 'at': []})
                if a['at'] and a['at'][-1][0] == r and a['at'][-1][1] + L > i:
                    continue
                a['occ'] += 1
                a['total'] += sum(ns(e['dur']) for e in run[i:i + L])
                a['gaps'] += gaps(run[i:i + L])
                a['at'].append((r, i))
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
        for r, i in acc[k]['at']:
            covered.update((r, j) for j in range(i, i + len(k)))
    cov_ns = sum(ns(runs[r][j]['dur']) for r, j in covered)
    steady = steps[warmup:]

    def in_steady(e):
        return not steps or any(a <= ns(e['ts']) < b for a, b in steady)

    claimed, union_all, union_steady, top = set(), 0, 0, []
    for k in ranked:
        s_all = s_steady = n_steady = 0
        for r, i in acc[k]['at']:
            es = runs[r][i:i + len(k)]
            s_all += saving(es)
            if in_steady(es[0]):
                s_steady += saving(es)
                n_steady += 1
        top.append({'ops': list(k), 'occurrences': acc[k]['occ'], 'total_ns': acc[k]['total'],
                    'gap_ns': acc[k]['gaps'], 'saving_ns': s_all, 'steady_saving_ns': s_steady,
                    'steady_occurrences': n_steady})
    for k in ranked:
        for r, i in acc[k]['at']:
            ids = [(r, j) for j in range(i, i + len(k))]
            if any(x in claimed for x in ids):
                continue
            claimed.update(ids)
            es = runs[r][i:i + len(k)]
            union_all += saving(es)
            union_steady += saving(es) if in_steady(es[0]) else 0
    print(json.dumps({'op_time_ns': op_time, 'short_op_ns': short_time, 'covered_ns': cov_ns,
                      'long_memory_bound_ops': long_mb, 'long_memory_bound_ns': long_mb_ns,
                      'steps': len(steps), 'steady_steps': len(steady),
                      'union_saving_ns': union_all, 'steady_union_saving_ns': union_steady,
                      'steady_union_saving_per_step_ns': union_steady / len(steady) if steady else None,
                      'top': top}, indent=1))


if __name__ == '__main__':
    main()
