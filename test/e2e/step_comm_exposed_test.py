#!/usr/bin/env python3
"""A step's exposed communication, one figure in summary and analyze,
checked against the raw JSON of three real NCCL traces.

Before, `aiprof summary`'s step breakdown counted copies and memsets as
compute hiding communication, and `aiprof analyze` (collective_stats.h) only
kernels: HTA's trace_filter rank 0, step 551, read Communication(Not
Overlapped) 171.78 ms in the summary and Exposed 172.26 ms in analyze (audit3,
"Minor"). The rule is now one (HidesCommunication, src/analysis/common/steps.h):
per device, exposed = |C| - |C ∩ K|, C the union of the collectives (NCCL
kernels), K the union of the other kernels; copies and memsets hide nothing.

This script reads the raw trace itself (no aiprof code): for each
ProfilerStep#N window, C and K clipped to the window, per device. Each
checked step's collectives lie whole inside its window (checked first), so
the summary's rule (the device work the step launched, whole) and analyze's
(clipped to the step's host span) cover the same intervals. It then checks
`summary --format json` (step_breakdown: Communication, Communication(Not
Overlapped), Overlapped) and `analyze --only communication --format json`
(Communication per step: comm_ns, exposed_ns) against it, within 1 us (the
summary writes whole microseconds).

  step_comm_exposed_test.py --aiprof build/aiprof --fixtures ../shared/fixtures
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile

TRACES = [
    "kineto/HolisticTraceAnalysis__tests__data__trace_filter__sampled_rank-0.json.gz",
    "kineto/HolisticTraceAnalysis__tests__data__trace_filter__sampled_rank-1.json.gz",
    "kineto/HolisticTraceAnalysis__tests__data__nccl_parser_config__nccl_data.json.gz",
]
DEVICE = ("kernel", "gpu_memcpy", "gpu_memset")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(u):
    return sum(e - s for s, e in u)


def clip(u, w0, w1):
    return [[max(s, w0), min(e, w1)] for s, e in u if min(e, w1) > max(s, w0)]


def intersection(a, b):
    total, j = 0, 0
    for s, e in a:
        while j < len(b) and b[j][1] <= s:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            total += max(0, min(e, b[k][1]) - max(s, b[k][0]))
            k += 1
    return total


def expected(path):
    """{step: (comm_us, exposed_us)} from the raw JSON; None for a step whose
    collectives cross its window's edges."""
    with gzip.open(path, "rt") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    comm, kernels, steps = {}, {}, []
    for e in events:
        if e.get("cat") in DEVICE:
            device = e.get("args", {}).get("device")
            iv = (float(e["ts"]), float(e["ts"]) + float(e["dur"]))
            if e["cat"] == "kernel" and "nccl" in e["name"].lower():
                comm.setdefault(device, []).append(iv)
            elif e["cat"] == "kernel":  # copies and memsets hide no communication
                kernels.setdefault(device, []).append(iv)
        elif e["name"].startswith("ProfilerStep#"):
            steps.append((int(e["name"].split("#")[1]), float(e["ts"]), float(e["ts"]) + float(e["dur"])))
    out = {}
    for number, w0, w1 in steps:
        c_total, exposed, whole = 0.0, 0.0, True
        for device, c in comm.items():
            cu = union(c)
            inside = clip(cu, w0, w1)
            whole &= length(inside) == length([iv for iv in cu if w0 <= iv[0] and iv[1] <= w1])
            c_total += length(inside)
            exposed += length(inside) - intersection(inside, union(kernels.get(device, [])))
        out[number] = (c_total, exposed) if whole else None
    return out


def run(aiprof, args, env):
    p = subprocess.run([aiprof] + args, capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != 0:
        sys.exit("aiprof %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr[-2000:]))
    return json.loads(p.stdout)


def comm_rows(doc):
    for block in doc["sections"]["communication"]["blocks"]:
        rows = block.get("rows") if isinstance(block, dict) else None
        if rows and "exposed_ns" in rows[0]:
            return rows
    return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    paths = [os.path.join(a.fixtures, t) for t in TRACES]
    if not all(os.path.exists(p) for p in paths):
        print("skip: fixtures not found under", a.fixtures)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, AIPROF_CALIBRATE="0", XDG_CONFIG_HOME=tmp, XDG_DATA_HOME=tmp)
        for path in paths:
            name = os.path.basename(path).split("__")[-1]
            want = expected(path)
            checked = {n: v for n, v in want.items() if v is not None}
            check(len(checked) >= 2, "%s: %d steps whose collectives lie inside them" % (name, len(checked)))
            summary = run(a.aiprof, ["summary", "--format", "json", path], env)
            rows = {b["step"]: b["values_us"] for b in summary["step_breakdown"] if b["source"] == "timeline"}
            analyze = {r["step"]: r for r in comm_rows(run(a.aiprof, ["analyze", "--only", "communication",
                                                                      "--format", "json", path], env))}
            for number, (comm, exposed) in sorted(checked.items()):
                v = rows.get(number, {})
                got = (v.get("Communication", -1), v.get("Communication(Not Overlapped)", -1), v.get("Overlapped", -1))
                check(abs(got[0] - comm) <= 1 and abs(got[1] - exposed) <= 1 and abs(got[2] - (comm - exposed)) <= 1,
                      "%s step %d: summary Communication / Not Overlapped / Overlapped %s us, raw %.3f / %.3f / %.3f"
                      % (name, number, got, comm, exposed, comm - exposed))
                r = analyze.get(number, {})
                got_a = (r.get("comm_ns", -1) / 1e3, r.get("exposed_ns", -1) / 1e3)
                check(abs(got_a[0] - comm) <= 1 and abs(got_a[1] - exposed) <= 1,
                      "%s step %d: analyze comm / exposed %.3f / %.3f us, raw %.3f / %.3f"
                      % (name, number, got_a[0], got_a[1], comm, exposed))
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
