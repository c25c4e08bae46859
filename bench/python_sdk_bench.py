#!/usr/bin/env python3
"""Cost of the Python SDK per call: what wrapping a request, a span or a step costs.

    PYTHONPATH=build/python python3 bench/python_sdk_bench.py [--number N] [--repeat R]

Each case runs in a child interpreter, recording (AIPROF_MODE=record, the file
written to a temporary folder) and disabled (AIPROF_ENABLE=0), next to the
same loop with no instrumentation. Prints the median over R repeats of the
time per iteration in ns (timeit, N iterations each), and the overhead over
the bare loop. Figures are wall time on a shared machine: compare them run
against run on the same machine, and re-run at a quiet moment.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

CASES = {
    # name: (setup, statement)
    "bare loop body (baseline)": ("", "pass"),
    "with span (object reused)": ("s = aiprof.span('work')", "with s: pass"),
    "with aiprof.span('work')": ("", "with aiprof.span('work'): pass"),
    "decorated call": ("@aiprof.span('work')\ndef f(): pass", "f()"),
    "plain call (baseline)": ("def f(): pass", "f()"),
    "with aiprof.request('request')": ("", "with aiprof.request('request'): pass"),
    "request() + .end()": ("", "r = aiprof.request('request'); r.end()"),
    "with aiprof.step()": ("", "with aiprof.step(): pass"),
    "aiprof.counter('depth', 1.0)": ("", "aiprof.counter('depth', 1.0)"),
}

CHILD = r"""
import json, statistics, sys, timeit
import aiprof
aiprof.span  # load the runtime before timing
number, repeat, setup, stmt = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
g = {"aiprof": aiprof}
exec(setup, g)
times = timeit.repeat(stmt, number=number, repeat=repeat, globals=g)
print(json.dumps(statistics.median(times) / number * 1e9))
"""


def run(number, repeat, setup, stmt, env):
    out = subprocess.run([sys.executable, "-c", CHILD, str(number), str(repeat), setup, stmt], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--number", type=int, default=200000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        modes = {
            "recording": dict(os.environ, AIPROF_OUTPUT=os.path.join(d, "bench.aiprof"), AIPROF_MODE="record"),
            "disabled": dict(os.environ, AIPROF_ENABLE="0"),
        }
        results = {}
        for case, (setup, stmt) in CASES.items():
            results[case] = {m: run(args.number, args.repeat, setup, stmt, env) for m, env in modes.items()}
    print("%-34s %12s %12s" % ("ns per iteration (median)", "recording", "disabled"))
    for case, r in results.items():
        print("%-34s %12.1f %12.1f" % (case, r["recording"], r["disabled"]))
    print(json.dumps({"number": args.number, "repeat": args.repeat, "results": results}))


if __name__ == "__main__":
    main()
