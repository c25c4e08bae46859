#!/usr/bin/env python3
"""Runs the docs/python.md walk-through (Holistic Trace Analysis's most used
calls, done with aiprof's Python API) on one trace and times each step.

    PYTHONPATH=build/python python3 bench/python_walkthrough.py TRACE [--repeat 5]

Prints each step's median wall time over the repeats (each repeat starts from
a fresh load) and the step's result on the last repeat.
"""

import argparse
import statistics
import time

import pandas as pd

import aiprof

DEVICE_KINDS = ["kernel", "collective", "memcpy", "memset"]


def load(path):
    return aiprof.load(path)


def temporal_breakdown(t):
    """HTA get_temporal_breakdown: per device, idle / compute / non-compute time (µs) and shares of the span."""
    d = t.devices()
    m = t.analyze(only=["breakdown"])["metrics"]
    compute_share = m["compute_ratio"]["value"]  # share of the device span
    out = pd.DataFrame({
        "rank": d["rank"], "device": d["device"],
        "idle_us": (d.span_ns - d.busy_ns) / 1e3,
        "compute_us": compute_share * d.span_ns / 1e3,
        "non_compute_us": (d.busy_ns - compute_share * d.span_ns) / 1e3,
        "kernel_us": d.busy_ns / 1e3,
    })
    out["idle_pct"] = 100 * out.idle_us / (d.span_ns / 1e3)
    return out


def kernel_breakdown(t):
    """HTA get_gpu_kernel_breakdown: time by kernel type, then per kernel name."""
    s = t.slices()
    k = s[s.kind.isin(DEVICE_KINDS)]
    by_type = (k.groupby("kind", observed=True).dur_ns.sum() / k.dur_ns.sum() * 100).rename("pct")
    by_kernel = (k[k.kind == "kernel"].groupby("name", observed=True).dur_ns
                 .agg(["sum", "max", "min", "mean", "std", "count"]).sort_values("sum", ascending=False))
    return by_type, by_kernel


def idle_time(t):
    """HTA get_idle_time_breakdown: idle gaps per stream, and idle time by cause (aiprof's breakdown)."""
    s = t.slices()
    k = s[s.kind.isin(DEVICE_KINDS)].sort_values(["device", "tid", "ts_ns"])
    prev_end = (k.ts_ns + k.dur_ns).groupby([k.device, k.tid]).shift()
    gaps = (k.ts_ns - prev_end).clip(lower=0)
    per_stream = gaps.groupby([k.device, k.tid]).agg(["sum", "count"]).rename(columns={"sum": "idle_ns", "count": "kernels"})
    m = t.analyze(only=["breakdown"])["metrics"]
    causes = {name: m[name]["value"] for name in ("idle_host_bound_ratio", "idle_sync_ratio", "data_loading_ratio")
              if name in m}
    return per_stream, causes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    steps = [("aiprof.load", lambda t: load(args.trace)),
             ("t.ops()", lambda t: t.ops()),
             ("t.slices()", lambda t: t.slices()),
             ("temporal breakdown", temporal_breakdown),
             ("kernel breakdown", kernel_breakdown),
             ("idle time", idle_time)]
    times = {name: [] for name, _ in steps}
    results = {}
    for _ in range(args.repeat):
        t = None
        for name, fn in steps:
            start = time.perf_counter()
            r = fn(t)
            times[name].append(time.perf_counter() - start)
            if name == "aiprof.load":
                t = r
            results[name] = r
    t = results["aiprof.load"]
    print("trace: %s (%d slices)" % (args.trace, len(results["t.slices()"])))
    for name, _ in steps:
        print("  %-20s %9.2f ms (median of %d)" % (name, statistics.median(times[name]) * 1e3, args.repeat))
    with pd.option_context("display.width", 160, "display.max_columns", 12, "display.max_colwidth", 50):
        print(results["temporal breakdown"].to_string(index=False))
        by_type, by_kernel = results["kernel breakdown"]
        print(by_type.round(2).to_string())
        print(by_kernel.head(5).rename(index=lambda n: n[:60]).to_string())
        per_stream, causes = results["idle time"]
        print(per_stream.to_string())
        print(causes)


if __name__ == "__main__":
    main()
