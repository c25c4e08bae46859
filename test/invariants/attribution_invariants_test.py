#!/usr/bin/env python3
"""Invariants of `aiprof analyze`'s step attribution and critical path on real
traces, each against a figure computed here from the raw trace JSON.

For each trace (Chrome/Kineto JSON with ProfilerStep#N on a host thread):
  * the attribution's time classes add up to the step's wall time, none is
    negative, coverage is 1, and the tree adds up (self + children = total);
  * the untraced host time per steady step equals the step spans minus the
    union of every host slice of the step thread's process that makes a node
    (cpu_op, runtime calls, record_function labels, nn.Module frames; not the
    profiler's wrappers, non-module Python frames or device records), within
    max(2 us, 1%);
  * the critical path of each step listed is step start to the later of the
    step's end and the end of the device work its runtime calls launched
    (correlation ids), within 1 us; its classes add up to it.

Tolerances: the JSON holds means of integer ns (relative 1e-9, or 2 ns);
the trace's µs timestamps are floats (hence 1 µs for the path, and 2 µs or
1% for the untraced time, whose union here does not reproduce aiprof's
handling of a slice that partially overlaps another).

Fails on the binary before da7e4765: TraceLens's xDiT Flux.1 profile read
81.04 ms untraced per step where 0.375 ms is (its execute_diffusion label was
cut to the `_record_function_enter_new` frame it is opened in).
"""
import argparse
import gzip
import json
import os
import subprocess
import sys

TRACES = [
    "fixtures/tracelens/inference__xdit_flux.1_aiter_sage__profile_trace_rank_0.json.gz",
    "fixtures/tracelens/mi300__resnet_act_checkpoint.json.gz",
    "fixtures/ascend/Ascend__msinsight__test__data__pytorch__text__level0__rank0_ascend_pt__ASCEND_PROFILER_OUTPUT__trace_view.json",
    "fixtures/torch-cpu/resnet18_bs1_full.kineto.json",
    "fixtures/kineto/HolisticTraceAnalysis__tests__data__cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    "data/resnet50_num_workers_0.pt.trace.json.gz",
    "data/convnet_bs8_channels_last.kineto.json",
    "data/step_offset_gloo/recorded/rank0.pt.trace.json.gz",
]
WRAPPERS = ("ProfilerStep#", "PyTorch Profiler", "record_param_comms", "Trace")
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "Kernel", "Memcpy", "Memset")
RUNTIME_CATS = ("cuda_runtime", "cuda_driver", "Runtime", "Driver")
CLASSES = ["op_ns", "module_code_ns", "launch_ns", "synchronisation_ns", "communication_ns", "data_loading_ns",
           "start_up_ns", "untraced_ns"]


def close(a, b, rel=1e-9, absolute=2.0):
    return abs(a - b) <= max(absolute, rel * max(abs(a), abs(b)))


def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        t = json.load(f)
    return [e for e in (t["traceEvents"] if isinstance(t, dict) else t) if isinstance(e, dict) and e.get("ph") == "X"]


def union_in(intervals, lo, hi):
    total, cur_s, cur_e = 0.0, None, None
    for a, b in sorted((max(a, lo), min(b, hi)) for a, b in intervals if b > lo and a < hi):
        if cur_s is None:
            cur_s, cur_e = a, b
        elif a <= cur_e:
            cur_e = max(cur_e, b)
        else:
            total += cur_e - cur_s
            cur_s, cur_e = a, b
    if cur_s is not None:
        total += cur_e - cur_s
    return total


def metric(doc, name):
    m = doc["metrics"].get(name)
    return None if m is None else m.get("value")


def check(aiprof, path):
    problems = []
    run = subprocess.run([aiprof, "analyze", "--format", "json", path], capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        return [f"analyze exited {run.returncode}: {run.stderr.strip()[-300:]}"]
    doc = json.loads(run.stdout)
    events = load_events(path)
    steps = sorted((e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")
                    and e.get("cat") not in DEVICE_CATS), key=lambda e: float(e["ts"]))
    if not steps:
        return ["no ProfilerStep#N in the trace"]
    # Attribution: classes add up, tree adds up.
    att = doc["sections"]["attribution"]["sections"]["attribution"]
    values = next(b["values"] for b in att["blocks"] if b["type"] == "values")
    wall = values["wall_ns"]["value"]
    parts = {c: values[c]["value"] for c in CLASSES}
    if not close(sum(parts.values()), wall):
        problems.append(f"attribution classes sum to {sum(parts.values())} ns, wall {wall} ns")
    problems += [f"attribution class {c} negative: {v}" for c, v in parts.items() if v < 0]
    if values["coverage"]["value"] != 1:
        problems.append(f"coverage {values['coverage']['value']}")
    tree = next(b for b in att["sections"]["tree"]["blocks"] if b.get("key") == "tree")["rows"]
    depth = [(len(r["node"]) - len(r["node"].lstrip(" "))) // 2 for r in tree]
    if not close(tree[0]["total_ns"], wall):
        problems.append(f"tree root {tree[0]['total_ns']} ns, wall {wall} ns")
    for i, r in enumerate(tree):
        j, children = i + 1, 0.0
        while j < len(tree) and depth[j] > depth[i]:
            if depth[j] == depth[i] + 1:
                children += tree[j]["total_ns"]
            j += 1
        if j > i + 1 and not close(r["self_ns"] + children, r["total_ns"]):
            problems.append(f"tree node {r['node'].strip()[:60]}: self {r['self_ns']} + children {children} "
                            f"!= total {r['total_ns']}")
    # Untraced host time, recomputed.
    warmup = int(metric(doc, "warmup_steps") or 0)
    truncated = int(metric(doc, "truncated_steps") or 0)
    steady = steps[warmup:len(steps) - truncated]
    pid = steps[0]["pid"]
    nodes = []
    for e in events:
        name, cat = str(e.get("name", "")), e.get("cat", "")
        if e.get("pid") != pid or cat in DEVICE_CATS or name.startswith(WRAPPERS):
            continue
        if cat == "python_function" and not name.startswith("nn.Module: "):
            continue
        ts = float(e["ts"])
        nodes.append((ts, ts + float(e.get("dur", 0))))
    holes = [float(s["dur"]) - union_in(nodes, float(s["ts"]), float(s["ts"]) + float(s["dur"])) for s in steady]
    mine = sum(holes) / len(holes) * 1000
    theirs = metric(doc, "untraced_host_ns")
    if theirs is None or not close(theirs, mine, 0.01, 2000):
        problems.append(f"untraced host time {theirs} ns per step, recomputed {mine:.0f} ns")
    # Critical path per listed step.
    ends = {}
    for e in events:
        c = e.get("args", {}).get("correlation")
        if e.get("cat") in DEVICE_CATS and c is not None:
            ends[c] = max(ends.get(c, 0.0), float(e["ts"]) + float(e.get("dur", 0)))
    calls = [(float(e["ts"]), e["args"]["correlation"]) for e in events
             if e.get("cat") in RUNTIME_CATS and e.get("args", {}).get("correlation") in ends]
    cp = doc["sections"]["critical_path"]
    rows = next(b for b in cp["blocks"] if b.get("key") == "steps")
    classes = [k for k in rows["units"] if k not in ("path_ns", "host_span_ns", "late_ns")]
    by_name = {s["name"]: s for s in steps}
    for r in rows["rows"]:
        s = by_name.get(f"ProfilerStep#{r['step']}")
        if s is None:
            problems.append(f"critical path step {r['step']} not in the trace")
            continue
        lo = float(s["ts"])
        hi = lo + float(s["dur"])
        last = max([hi] + [ends[c] for ts, c in calls if lo <= ts < hi])
        if abs((last - lo) * 1000 - r["path_ns"]) > 1000:
            problems.append(f"critical path of step {r['step']}: {r['path_ns']} ns, recomputed {(last - lo) * 1000:.0f}")
        if not r.get("truncated") and not close(sum(r.get(k) or 0 for k in classes), r["path_ns"]):
            problems.append(f"critical path of step {r['step']}: classes sum to {sum(r.get(k) or 0 for k in classes)}")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    roots = {"fixtures": a.fixtures, "data": a.data}
    failed = 0
    for rel in TRACES:
        root, sub = rel.split("/", 1)
        path = os.path.join(roots[root], sub)
        if not os.path.exists(path):
            print(f"FAIL {rel}: missing")
            failed += 1
            continue
        problems = check(a.aiprof, path)
        print(("FAIL " if problems else "ok   ") + rel)
        for p in problems:
            print("     " + p)
        failed += bool(problems)
    print(f"{len(TRACES) - failed} of {len(TRACES)} traces hold the invariants")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
