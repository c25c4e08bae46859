#!/usr/bin/env python3
"""aiprof's kernel classes (analyze --only kernels) on TraceLens's real traces,
checked against this script's own reading of the raw JSON.

The classes are written again here from their documentation (docs/analyses.md,
"kernels"; src/analysis/roofline/kernel_class.h), with no aiprof code: a
device event (cat kernel, gpu_memcpy, gpu_memset) is classed by its category
(memcpy, memset), its collective library (nccl/rccl), Inductor's Triton
prefixes, Ascend's `_MemSet` fills, then by name patterns in order: conv,
attention (SageAttention and KV-cache writes included), gemm, norm, reduction,
elementwise, else other. Per trace, every class's kernel count must equal
aiprof's and its time agree within 1 ns per kernel (the JSON's microsecond
floats rounded to ns).

It also checks that the attribution tree classes device activity the same
way (audit2 item 2: xDiT Flux's `sage_fwd` was "other" in analyze and
attention in diagnose): on xDiT Flux, SageAttention's kernels count as
attention in both analyze's kernels section and diagnose's compute classes.

Usage: kernel_classes_oracle_test.py --aiprof build/aiprof --fixtures ../shared/fixtures/tracelens
(exit 77, skipped, when the fixtures folder is missing).
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from decimal import Decimal

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def has(name, parts, case=False):
    n = name if case else name.lower()
    return any((p if case else p.lower()) in n for p in parts)


def cudnn_conv_engine(n):
    # "cudnn_" right after s, h or a digit (volta_scudnn_, h884cudnn_, s1688cudnn_).
    i = n.find("cudnn_")
    while i >= 0:
        if i > 0 and (n[i - 1] in "sh" or n[i - 1].isdigit()):
            return True
        i = n.find("cudnn_", i + 1)
    return False


def classify(cat, n):
    if cat == "gpu_memset":
        return "memset"
    if cat == "gpu_memcpy":
        return "memcpy"
    if has(n, ["nccl", "rccl"]):
        return "collective"
    if n.startswith("triton_"):
        return {"poi_": "triton_pointwise", "red_": "triton_reduction", "per_": "triton_persistent_reduction",
                "tem_": "triton_template", "for_": "triton_foreach"}.get(n[7:11], "triton_other")
    if n.endswith("_MemSet"):
        return "elementwise"
    if (has(n, ["convolution", "convolve", "conv2d", "conv3d", "conv1d", "winograd"]) or
            has(n, ["dgrad", "wgrad", "fprop"], case=True) or cudnn_conv_engine(n)):
        return "conv"
    if (has(n, ["attention", "flash", "fmha", "sdpa", "multi_head", "sage_fwd", "sage_bwd", "sage_quant", "sageattn",
                "kvcache", "kv_cache", "reshape_and_cache"]) or n.startswith("attn_") or
            has(n, ["_attn_", "attn_fwd", "attn_bwd"], case=True)):
        return "attention"
    if n.startswith("Cijk_") or has(n, ["gemm", "gemv", "matmul"]) or has(n, ["cutlass", "xmma"], case=True):
        return "gemm"
    if has(n, ["norm"]) or has(n, ["bn_fw", "bn_bw"], case=True):
        return "norm"
    if has(n, ["reduce_kernel", "reduce_segments", "Reduce"], case=True):
        return "reduction"
    if has(n, ["elementwise_kernel", "vectorized_", "unrolled_elementwise"], case=True):
        return "elementwise"
    return "other"


def oracle(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        d = json.load(f, parse_float=Decimal)
    events = d["traceEvents"] if isinstance(d, dict) else d
    time, count = defaultdict(int), defaultdict(int)
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        c = classify(e["cat"], e.get("name", ""))
        time[c] += int(Decimal(e.get("dur", 0)) * 1000)
        count[c] += 1
    return time, count


def run(aiprof, env, *args):
    p = subprocess.run([aiprof, *args], capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(" ".join(args) + ": exit " + str(p.returncode) + ": " + p.stderr[-2000:])
    return json.loads(p.stdout)


def aiprof_classes(aiprof, env, path):
    d = run(aiprof, env, "analyze", path, "--only", "kernels", "--format", "json")
    for block in d["sections"]["kernels"]["blocks"]:
        if block.get("key") == "classes":
            return {r["class"]: (r["time_ns"], r["kernels"]) for r in block["rows"]}
    return {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    if not os.path.isdir(a.fixtures):
        print("skipped: no fixtures folder " + a.fixtures)
        return 77
    tmp = tempfile.mkdtemp(prefix="kernel_classes_")
    env = dict(os.environ, AIPROF_CALIBRATE="0", XDG_CONFIG_HOME=tmp, XDG_DATA_HOME=tmp)
    traces = sorted(f for f in os.listdir(a.fixtures) if f.endswith(".json.gz") and "capture_traces" not in f)
    check(len(traces) >= 8, "the TraceLens fixtures hold at least 8 traces (%d)" % len(traces))
    for name in traces:
        path = os.path.join(a.fixtures, name)
        time, count = oracle(path)
        got = aiprof_classes(a.aiprof, env, path)
        for c in sorted(set(time) | set(got)):
            t, k = got.get(c, (0, 0))
            check(k == count[c] and abs(t - time[c]) <= count[c] + 10,
                  "%s: %s %d kernels %d ns (aiprof %d kernels %d ns)" % (name, c, count[c], time[c], k, t))
    # One classifier: diagnose's compute classes put xDiT's SageAttention
    # kernels in attention as analyze does.
    xdit = os.path.join(a.fixtures, "inference__xdit_flux.1_aiter_sage__profile_trace_rank_0.json.gz")
    if os.path.exists(xdit):
        time, _ = oracle(xdit)
        with gzip.open(xdit, "rt") as f:
            raw = json.load(f, parse_float=Decimal)
        sage = sum(int(Decimal(e.get("dur", 0)) * 1000) for e in raw["traceEvents"]
                   if e.get("ph") == "X" and e.get("cat") == "kernel" and e.get("name", "").startswith("sage_"))
        check(sage > 13_000_000, "xDiT: SageAttention kernels hold %d ns (9.996 + 3.535 ms)" % sage)
        check(time["attention"] >= sage, "xDiT: the oracle's attention (%d ns) holds them" % time["attention"])
        got = aiprof_classes(a.aiprof, env, xdit)
        check(got.get("attention", (0, 0))[0] >= sage,
              "xDiT: analyze's attention (%d ns) holds them" % got.get("attention", (0, 0))[0])
    print("%d failed" % len(FAILS) if FAILS else "all passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
