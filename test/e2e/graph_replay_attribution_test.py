#!/usr/bin/env python3
"""Graph-replayed kernels in the attribution tree, under the ops that
captured them (real TraceLens fixture: vLLM's decode replay with its capture).

The replay's one hipGraphLaunch runs 421 kernels, 6.9 ms after it returns,
past the main thread's span (the tree's one pseudo-step, 2.41 ms). The merge
(--capture-trace) re-times the captured ops onto those kernels, so they lay
outside the step, and the tree left all 10.39 ms of the graph's device time
under hipGraphLaunch (the helper "replay" found it, README's `import`
section admitted it). Now a replay's captured module path and ops hang where
its graph launch ran (beside it, under the node that encloses it, in its
step): they have no host time of their own, only the device time of the
kernels they captured.

Checked against the raw JSON, read here with gzip + json alone:
  * the replayed activities are those whose "correlation" arg is the graph
    launch's (the trace's ac2g flow ends with that id say the same), and
    their summed duration is the device time of the captured nodes (rows of
    the tree with no host time) beside hipGraphLaunch, whose own device time
    is now 0;
  * the tree's device total stays every device activity of the trace;
  * the launch figures keep reading the graph launch: `--only launches`
    gives the same figures with and without the capture, but for op
    coverage, which the capture raises to 1.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys

FAILURES = []
CHECKS = [0]

VLLM = "inference__vllm_decode_full__graph_execution.json.gz"
VLLM_CAPTURE = "inference__vllm_decode_full__capture_traces__graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"
DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def ns(us):
    return int(round(us * 1000))


def replayed_from_json(path):
    """(graph launch correlation ids, replayed activities' summed ns and count,
    all device activities' summed ns), from the raw trace."""
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    launches = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"
                and e.get("name", "").lower() in ("hipgraphlaunch", "cudagraphlaunch")]
    ids = {e["args"]["correlation"] for e in launches}
    device = [e for e in events if e.get("ph") == "X" and e.get("cat") in DEVICE_CATEGORIES]
    replayed = [e for e in device if e.get("args", {}).get("correlation") in ids]
    # The flows say the same: one ac2g end per replayed activity, at its start,
    # besides the one on the launch call itself.
    ends = [e for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g" and e.get("id") in ids]
    starts = {(e["pid"], e["tid"], e["ts"]) for e in replayed}
    flow_ends = sum(1 for e in ends if (e["pid"], e["tid"], e["ts"]) in starts)
    return ids, sum(ns(e["dur"]) for e in replayed), len(replayed), flow_ends, sum(ns(e["dur"]) for e in device)


def run(exe, *args):
    env = dict(os.environ, AIPROF_CALIBRATE="0")
    p = subprocess.run([exe, *args], capture_output=True, timeout=300, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def tree_rows(doc):
    """The tree table's rows with each row's depth and parent row index."""
    rows = doc["sections"]["attribution"]["sections"]["attribution"]["sections"]["tree"]["blocks"]
    table = next(b for b in rows if b.get("type") == "table" and b.get("key") == "tree")
    out, stack = [], []
    for r in table["rows"]:
        label = r["node"]
        depth = (len(label) - len(label.lstrip(" "))) // 2
        while stack and out[stack[-1]]["depth"] >= depth:
            stack.pop()
        out.append(dict(r, name=label.strip(), depth=depth, parent=stack[-1] if stack else None))
        stack.append(len(out) - 1)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    tl = os.path.join(a.fixtures, "tracelens")
    replay, capture = os.path.join(tl, VLLM), os.path.join(tl, VLLM_CAPTURE)

    ids, replayed_ns, replayed_n, flow_ends, device_ns = replayed_from_json(replay)
    print("raw JSON: %d graph launch(es), %d replayed activities (%d ac2g ends), %d ns; all device %d ns"
          % (len(ids), replayed_n, flow_ends, replayed_ns, device_ns))
    check(len(ids) == 1 and replayed_n == 421 and flow_ends == replayed_n,
          "the fixture replays one graph of 421 activities, each an ac2g flow end")

    rc, out, err = run(a.aiprof, "analyze", replay, "--capture-trace", capture, "--only", "attribution",
                       "--format", "json")
    check(rc == 0, "analyze --capture-trace exits 0: " + err.strip()[:300])
    if rc != 0:
        return report()
    rows = tree_rows(json.loads(out))
    check(rows and rows[0]["kind"] == "step", "the tree starts at its step")
    check(rows[0]["device_ns"] == device_ns, "the tree's device time is every device activity: %s vs %d"
          % (rows[0]["device_ns"], device_ns))
    launch = [i for i, r in enumerate(rows) if r["kind"] == "runtime" and r["name"] == "hipGraphLaunch"]
    check(len(launch) == 1, "one hipGraphLaunch node in the tree: %d" % len(launch))
    if len(launch) != 1:
        return report()
    g = rows[launch[0]]
    check(g["total_ns"] > 0, "hipGraphLaunch keeps its host time: %s" % g["total_ns"])
    check(g["device_ns"] == 0, "hipGraphLaunch keeps none of the replayed device time: %s ns" % g["device_ns"])
    # The captured nodes: beside the graph launch, no host time of their own.
    beside = [r for r in rows if r["parent"] == g["parent"] and r is not g]
    captured = [r for r in beside if r["total_ns"] == 0 and r["device_ns"] > 0]
    captured_ns = sum(r["device_ns"] for r in captured)
    print("tree: hipGraphLaunch device %s ns; captured nodes beside it %s: %d ns"
          % (g["device_ns"], [r["name"][:40] for r in captured], captured_ns))
    check(captured_ns == replayed_ns, "device time under the captured nodes (%d ns) is the replayed activities' (%d ns)"
          % (captured_ns, replayed_ns))
    # They are the capture's modules and ops, with its ops (and their
    # launches) under them.
    top = {r["kind"] for r in captured}
    below = {r["kind"] for r in rows if r["parent"] is not None and r["depth"] > g["depth"]
             and r["total_ns"] == 0 and r["device_ns"] > 0 and r not in captured}
    check(captured and top <= {"module", "op", "other"} and "op" in top | below and "runtime" in below,
          "the captured nodes are the capture's modules, ops and launch calls: %s, then %s" % (sorted(top), sorted(below)))

    # The launch figures read the graph launch, with or without the capture.
    rc1, alone, err1 = run(a.aiprof, "analyze", replay, "--only", "launches", "--format", "json")
    rc2, merged, err2 = run(a.aiprof, "analyze", replay, "--capture-trace", capture, "--only", "launches",
                            "--format", "json")
    check(rc1 == 0 and rc2 == 0, "analyze --only launches exits 0: " + (err1 + err2).strip()[:300])
    if rc1 == 0 and rc2 == 0:
        m1, m2 = json.loads(alone)["metrics"], json.loads(merged)["metrics"]
        # op_coverage (the device time an op launched) is what the capture adds.
        keys = [k for k in m1 if m1[k].get("source") == "launches" and k != "op_coverage"]
        diffs = [k for k in keys if m1.get(k) != m2.get(k)]
        check("graph_launch_cost_ns" in keys and not diffs,
              "launch metrics are the same with the capture: %s differ" % diffs)
        check(m2["op_coverage"]["value"] == 1, "with the capture every kernel has an op: %s" % m2["op_coverage"])
    return report()


def report():
    print("graph replay attribution: %d passed, %d failed" % (CHECKS[0] - len(FAILURES), len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
