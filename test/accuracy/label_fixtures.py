#!/usr/bin/env python3
"""Labels for the diagnosis accuracy suite, worked out from the traces by a
second, independent implementation (plain Python over the raw files, sharing
no code with aiprof):

GPU traces (Chrome/Kineto JSON):
  - steps: host ProfilerStep#N slices; warm-up = leading steps slower than
    median(rest) + max(3 * 1.4826 * MAD(rest), 20% of median(rest));
  - start-up: runtime/driver calls >= 1 ms and >= 20x the median of their name
    (or long known init calls seen at most twice), as a union; a trace is
    start-up dominated when that is more than half of its span;
  - the window: steady steps, else the span minus start-up;
  - device idle gaps inside the window, by cause: overlapped by a DataLoader
    span -> data_loading; by a blocking sync -> sync_bound; the next device
    activity's launching runtime call (same correlation id) began at or after
    the gap's start -> host_bound; else other. Exposed copies (not under a
    kernel) -> memcpy; NCCL kernels not under other kernels -> communication.
  Expected first finding: "startup" when start-up dominated; else the largest
  of those components when it is at least 10% of the base; else "none of
  them" (first finding must not be one of them). Must not be high confidence:
  every component below 2% of the base.
torch_npu folders: the profiler's own step_trace_time.csv columns:
  Communication(Not Overlapped) / (Computing + that + Free) -> communication
  when the largest; Free (idle) largest -> idle causes; Computing largest ->
  none of them.
Prints the labels as JSON.
"""
import csv
import glob
import gzip
import json
import os
import statistics
import sys

COMPONENTS = ["data_loading", "sync_bound", "host_bound", "memcpy", "communication_bound"]
INIT = ("cudaDeviceGetStreamPriorityRange", "cudaGetDevice", "cudaSetDevice", "cudaFree", "cudaMalloc",
        "cudaHostAlloc", "cudaStreamCreate", "cudaEventCreate", "cuInit", "cuDevicePrimaryCtx", "cuCtxCreate",
        "cuModuleLoad", "cuLibraryLoad", "cudnnCreate", "cublasCreate", "cublasLtCreate")


def merge(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def overlap_len(a, b):  # two merged lists
    i = j = 0
    total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def length(a):
    return sum(y - x for x, y in a)


def warmup_count(durs):
    if len(durs) < 4:
        return 0
    k = 0
    while k < min(len(durs) // 2, len(durs) - 3):
        rest = durs[k + 1:]
        med = statistics.median(rest)
        mad = statistics.median([abs(x - med) for x in rest])
        if durs[k] <= med + max(3 * 1.4826 * mad, 0.2 * med):
            break
        k += 1
    return k


def gpu_labels(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        d = json.load(f)
    ev = [e for e in (d["traceEvents"] if isinstance(d, dict) else d) if e.get("ph") == "X" and "dur" in e]
    ns = lambda e: (int(round(float(e["ts"]) * 1000)), int(round((float(e["ts"]) + float(e["dur"])) * 1000)))
    cat = lambda e: str(e.get("cat", "")).lower()
    dev = [e for e in ev if cat(e) in ("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset")]
    if not dev:
        return None
    start = min(ns(e)[0] for e in ev)
    end = max(ns(e)[1] for e in ev)
    runtime = [e for e in ev if cat(e) in ("cuda_runtime", "cuda_driver", "runtime")]
    by_name = {}
    for e in runtime:
        by_name.setdefault(e["name"], []).append(float(e["dur"]) * 1000)
    startup = []
    for e in runtime:
        dur = float(e["dur"]) * 1000
        if dur < 1e6:
            continue
        med = statistics.median(by_name[e["name"]])
        if dur >= 20 * med or (e["name"].startswith(INIT) and len(by_name[e["name"]]) <= 2):
            startup.append(ns(e))
    startup = merge(startup)
    startup_share = length(startup) / (end - start) if end > start else 0
    steps = sorted([ns(e) for e in ev if e["name"].startswith("ProfilerStep#") and cat(e) != "gpu_user_annotation"])
    if steps:
        durs = [b - a for a, b in steps]
        w = warmup_count(durs)
        window = merge(steps[w:])
        n = len(steps) - w
        base = sum(durs[w:]) / n
    else:
        cut, at = [], start
        for a, b in startup:
            if a > at:
                cut.append([at, a])
            at = max(at, b)
        if at < end:
            cut.append([at, end])
        window, n, base = cut, 0, length(cut)
    per = (lambda x: x / n) if n else (lambda x: x)
    launch_ts = {}
    for e in runtime:
        c = e.get("args", {}).get("correlation")
        if c is not None:
            launch_ts[c] = ns(e)[0]
    loaders = merge([ns(e) for e in ev if "dataloader" in e["name"].lower() and cat(e) not in ("kernel",)])
    syncs = merge([ns(e) for e in ev if cat(e) == "cuda_sync" or
                   (cat(e) in ("cuda_runtime", "runtime") and e["name"].endswith("Synchronize"))])
    comp = {c: 0.0 for c in COMPONENTS}
    # One timeline per device.
    by_dev = {}
    for e in dev:
        by_dev.setdefault(e.get("args", {}).get("device", e.get("pid")), []).append(e)
    for es in by_dev.values():
        es.sort(key=lambda e: ns(e))
        kernels = merge([ns(e) for e in es if cat(e) == "kernel" and "nccl" not in e["name"].lower()])
        nccl = merge([ns(e) for e in es if cat(e) == "kernel" and "nccl" in e["name"].lower()])
        copies = merge([ns(e) for e in es if cat(e) != "kernel"])
        cw = [[max(a, x), min(b, y)] for a, b in copies for x, y in window if min(b, y) > max(a, x)]
        comp["memcpy"] += length(cw) - overlap_len(merge(cw), merge(kernels + nccl))
        nw = [[max(a, x), min(b, y)] for a, b in nccl for x, y in window if min(b, y) > max(a, x)]
        comp["communication_bound"] += length(nw) - overlap_len(merge(nw), kernels)
        cur_end = ns(es[0])[1]
        for e in es[1:]:
            a, b = ns(e)
            if a > cur_end:
                gap = [[cur_end, a]]
                inside = overlap_len(gap, window)
                if inside > 0:
                    if overlap_len(gap, loaders) > 0:
                        comp["data_loading"] += inside
                    elif overlap_len(gap, syncs) > 0:
                        comp["sync_bound"] += inside
                    elif launch_ts.get(e.get("args", {}).get("correlation"), -1) >= cur_end:
                        comp["host_bound"] += inside
            cur_end = max(cur_end, b)
    shares = {c: per(v) / len(by_dev) / base if base > 0 else 0 for c, v in comp.items()}
    if startup_share > 0.5:
        first = "startup"
    else:
        best = max(COMPONENTS, key=lambda c: shares[c])
        first = best if shares[best] >= 0.10 else "none_of:" + ",".join(COMPONENTS)
    return {"first": first, "not_high": sorted(c for c in COMPONENTS if shares[c] < 0.02),
            "shares": {c: round(v, 4) for c, v in shares.items()}, "startup_share": round(startup_share, 4)}


def npu_labels(folder):
    files = glob.glob(os.path.join(folder, "*", "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"))
    if not files:
        return None
    tot = {"Computing": 0.0, "Communication(Not Overlapped)": 0.0, "Free": 0.0}
    for p in files:
        for row in csv.DictReader(open(p)):
            for k in tot:
                tot[k] += float(row[k])
    base = sum(tot.values())
    share = {k: v / base for k, v in tot.items()}
    top = max(share, key=share.get)
    first = {"Communication(Not Overlapped)": "communication_bound", "Computing": "none_of:" + ",".join(COMPONENTS),
             "Free": "any_of:host_bound,sync_bound,data_loading"}[top]
    not_high = []  # the CSV says nothing about copies or data loading
    if share["Communication(Not Overlapped)"] < 0.02:
        not_high.append("communication_bound")
    return {"first": first, "not_high": sorted(not_high), "shares": {k: round(v, 4) for k, v in share.items()}}


def main():
    fixtures = sys.argv[1]
    sample = sys.argv[2]
    labels = {}
    for p in sorted(glob.glob(os.path.join(fixtures, "kineto", "*.json.gz"))) + [os.path.join(sample, "alexnet_a100_kineto.json.gz")]:
        lab = gpu_labels(p)
        if lab:
            labels[os.path.relpath(p, fixtures) if p.startswith(fixtures) else "sample/" + os.path.basename(p)] = lab
    for level in ("level0", "level1"):
        lab = npu_labels(os.path.join(fixtures, "ascend-pt", level))
        if lab:
            labels["ascend-pt/" + level] = lab
    json.dump(labels, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
