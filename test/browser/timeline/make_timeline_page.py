#!/usr/bin/env python3
"""Browser test of `aiprof view --timeline`: writes a hand-made Kineto-style
trace (two ranks' worth of tracks on one rank: host threads, a GPU stream,
launches with correlation ids, three ProfilerSteps, a counter, a hostile
slice name, and many short ops), then runs aiprof on it.

  make_timeline_page.py --aiprof AIPROF --html OUT.html

The trace is written beside the page as timeline_trace.json; the checks
(timeline_checks.js) read it to compute expected figures independently."""
import argparse
import json
import os
import subprocess
import sys

HOSTILE = "</script><img src=x onerror=alert(1)>"


def make_trace():
    ev = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python3"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "loader"}},
        {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
    ]
    corr = 1
    t = 1000  # µs; the earliest event of the trace
    for step in range(3):
        step_start = t
        ev.append({"ph": "X", "name": f"ProfilerStep#{step + 1}", "cat": "user_annotation", "pid": 1, "tid": 1,
                   "ts": t, "dur": 900})
        ev.append({"ph": "X", "name": "aten::conv2d", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": t + 10, "dur": 300})
        ev.append({"ph": "X", "name": "aten::convolution", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": t + 20,
                   "dur": 200})
        ev.append({"ph": "X", "name": "cudaLaunchKernel", "cat": "cuda_runtime", "pid": 1, "tid": 1, "ts": t + 30,
                   "dur": 20, "args": {"correlation": corr}})
        ev.append({"ph": "X", "name": "implicit_gemm_kernel", "cat": "kernel", "pid": 0, "tid": 7, "ts": t + 60,
                   "dur": 150, "args": {"correlation": corr, "device": 0, "stream": 7}})
        corr += 1
        ev.append({"ph": "X", "name": HOSTILE if step == 1 else "aten::relu", "cat": "cpu_op", "pid": 1, "tid": 1,
                   "ts": t + 350, "dur": 100})
        ev.append({"ph": "X", "name": "cudaLaunchKernel", "cat": "cuda_runtime", "pid": 1, "tid": 1, "ts": t + 360,
                   "dur": 15, "args": {"correlation": corr}})
        ev.append({"ph": "X", "name": "relu_kernel", "cat": "kernel", "pid": 0, "tid": 7, "ts": t + 500, "dur": 40,
                   "args": {"correlation": corr, "device": 0, "stream": 7}})
        corr += 1
        # Many short ops: merged into density bars when the budget is small.
        for k in range(40):
            ev.append({"ph": "X", "name": "aten::add_", "cat": "cpu_op", "pid": 1, "tid": 1,
                       "ts": t + 600 + 5 * k, "dur": 2})
        ev.append({"ph": "X", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                   "cat": "user_annotation", "pid": 1, "tid": 2, "ts": step_start + 550, "dur": 200})
        ev.append({"ph": "C", "name": "GPU 0 memory", "pid": 0, "ts": t + 60, "args": {"bytes": 1000 * (step + 1)}})
        ev.append({"ph": "C", "name": "GPU 0 memory", "pid": 0, "ts": t + 700, "args": {"bytes": 500}})
        t += 1000
    return {"traceEvents": ev}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--aiprof", required=True)
    p.add_argument("--html", required=True)
    a = p.parse_args()
    out_dir = os.path.dirname(os.path.abspath(a.html))
    os.makedirs(out_dir, exist_ok=True)
    trace = os.path.join(out_dir, "timeline_trace.json")
    with open(trace, "w") as f:
        json.dump(make_trace(), f)
    r = subprocess.run([a.aiprof, "view", trace, "--timeline", "-o", a.html])
    sys.exit(r.returncode)


if __name__ == "__main__":
    main()
