#!/usr/bin/env python3
"""Independent oracle for the graph-capture merge (src/importers/graph_capture/).

Reads the replay and capture trace JSON directly, no aiprof code. Replay: the
device activities whose `correlation` is a *GraphLaunch call's, in start order
per launch. Capture: the launch calls (*Launch*, *Memcpy*, *Memset*, not a
graph launch) on the StreamBeginCapture thread between that call's end and
StreamEndCapture's start; their `kernel` arg names the kernel. Prints per
graph launch the replayed count, whether the i-th captured call names the i-th
kernel (in order), else how many captured calls a greedy in-order scan skips;
the cpu_ops in the window per GEMM name; and the device time of replayed
kernels whose captured call sits under a cpu_op, over all device time (the op
coverage after the merge). Figures quoted in graph_capture_merge_test.cc and
graph_replay_ops_test.cc. Usage: graph_capture_oracle.py REPLAY CAPTURE
"""
import collections
import sys

from oracle_common import load_events


def main():
    replay, capture = load_events(sys.argv[1]), load_events(sys.argv[2])
    host = lambda e: e.get("cat") in ("cuda_runtime", "cuda_driver")
    begin = next(e for e in capture if host(e) and "StreamBeginCapture" in e["name"])
    end = next(e for e in capture if host(e) and "StreamEndCapture" in e["name"])
    start, stop, tid = begin["ts"] + begin["dur"], end["ts"], begin["tid"]
    inside = lambda e: e.get("tid") == tid and start <= e["ts"] and e["ts"] + e.get("dur", 0) <= stop
    calls = sorted((e for e in capture if host(e) and inside(e) and "GraphLaunch" not in e["name"]
                    and any(k in e["name"] for k in ("Launch", "Memcpy", "Memset"))), key=lambda e: e["ts"])
    ops = [e for e in capture if e.get("cat") == "cpu_op" and inside(e)]
    under_op = lambda c: any(o["ts"] <= c["ts"] and c["ts"] + c["dur"] <= o["ts"] + o["dur"] for o in ops)
    graph = {e["args"]["correlation"] for e in replay if host(e) and "GraphLaunch" in e["name"]}
    device = [e for e in replay if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    by_launch = collections.defaultdict(list)
    for e in sorted(device, key=lambda e: e["ts"]):
        if e["args"].get("correlation") in graph:
            by_launch[e["args"]["correlation"]].append(e)
    print(f"captured calls {len(calls)}, graph launches {len(by_launch)}")
    covered = 0
    for corr, kernels in by_launch.items():
        in_order = len(kernels) == len(calls) and all(c["args"].get("kernel") == k["name"] for c, k in zip(calls, kernels))
        j, skipped, pairs = 0, 0, []
        for k in kernels:
            while j < len(calls) and calls[j]["args"].get("kernel") != k["name"]:
                j, skipped = j + 1, skipped + 1
            if j == len(calls):
                pairs = None
                break
            pairs.append((k, calls[j]))
            j += 1
        print(f"launch {corr}: replayed {len(kernels)}, in order {in_order}, greedy skips {skipped if pairs else 'failed'}")
        covered += sum(k["dur"] for k, c in (pairs or []) if under_op(c))
    gemm = collections.Counter(o["name"] for o in ops if o["name"] in ("aten::linear", "aten::addmm", "aten::mm", "aten::bmm"))
    print("window GEMM ops:", dict(gemm))
    total = sum(e["dur"] for e in device)
    print(f"device time {total} us, replayed under a cpu_op {covered} us ({float(covered) / float(total):.4f})")


if __name__ == "__main__":
    main()
