#!/usr/bin/env python3
"""Independent oracle: GEMM and attention FLOPs by TraceLens's published
formulas (TraceLens/PerfModel/perf_model.py: GEMM.flops_func = 2·M·N·K +
M·N with a bias; aten::linear M = prod(input[:-1]), bias when a third
input has dims; aten::addmm bias always; aten::bmm B·2·M·N·K;
SDPA.flops_func = B·H·(2·N_Q·N_KV·d_qk + 2·N_Q·N_KV·d_v), halved when causal
and N_Q == N_KV; is_causal is "Concrete Inputs"[5] of
aten::scaled_dot_product_attention). Prints, per op name, instances and Σ
FLOPs over every instance with shapes. Usage: tracelens_flops_oracle.py TRACE
"""
import gzip, json, sys
from math import prod


def flops(name, a):
    d = a.get('Input Dims')
    if not d:
        return None
    if name == 'aten::linear':
        x, w = d[0], d[1]
        m, k, n = prod(x[:-1]), x[-1], w[0]
        bias = len(d) > 2 and len(d[2]) > 0
        return 2 * m * n * k + (m * n if bias else 0)
    if name == 'aten::addmm':
        m, k, n = d[1][0], d[1][1], d[2][1]
        return 2 * m * n * k + m * n
    if name == 'aten::mm':
        return 2 * d[0][0] * d[0][1] * d[1][1]
    if name == 'aten::bmm':
        return d[0][0] * 2 * d[0][1] * d[0][2] * d[1][2]
    if name == 'aten::scaled_dot_product_attention':
        q, k, v = d[0], d[1], d[2]
        b, h, nq, dqk = q
        nkv, dv = k[2], v[3]
        f = b * h * (2 * nq * nkv * dqk + 2 * nq * nkv * dv)
        causal = a.get('Concrete Inputs', [''] * 6)[5] == 'True'
        return f / 2 if causal and nq == nkv else f
    return None


def main():
    path = sys.argv[1]
    d = json.load((gzip.open if path.endswith('.gz') else open)(path))
    out = {}
    for e in d['traceEvents']:
        if e.get('ph') != 'X' or e.get('cat') != 'cpu_op':
            continue
        f = flops(e['name'], e.get('args', {}))
        if f is None:
            continue
        o = out.setdefault(e['name'], [0, 0])
        o[0] += 1
        o[1] += f
    print(json.dumps(out, sort_keys=True))


if __name__ == '__main__':
    main()
