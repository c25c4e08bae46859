#!/usr/bin/env python3
"""Writes calls_a.json and calls_b.json: a hand-made pair of Kineto-style
traces (not from a real run) for `aiprof diff`'s calls rule (docs/diff.md,
"Fewer or more calls"). Six steps of 3 ms each on one thread, every op
inside `nn.Module: Net_0`, durations in µs with a small fixed jitter per
step so that per-step samples have spread:

  op            run A                    run B                    what happened
  aten::mm      2 calls x ~300 µs        1 call x ~300 µs         one of two identical calls gone
  aten::add     1 call x ~100 µs         1 call x ~150 µs         each call slower, same calls
  aten::copy_   2 calls x ~100 µs        3 calls x ~200 µs        one more call, each call twice as long
  aten::relu    4 calls x ~50 µs         2 calls x ~60 µs         two calls gone, each call 20% slower
  aten::sum     1 call x 40 µs           1 call x 40 µs           unchanged

Run: python3 test/data/diff/gen_calls_pair.py test/data/diff
"""
import json
import os
import sys

STEPS = 6
STEP_US = 3000
T0 = 1000
JITTER = [0, 1, -1, 1, 0, -1]  # per step, symmetric: no skew

# name -> (durations of the calls in step k), per run
def calls(run, k):
    j = JITTER[k]
    j2 = JITTER[(k + 2) % STEPS]
    if run == "a":
        return [("aten::mm", [300 + j, 300 - j2]), ("aten::add", [100 + j]), ("aten::copy_", [100 + j, 100 - j2]),
                ("aten::relu", [50 + j, 50 - j, 50 + j2, 50 - j2]), ("aten::sum", [40])]
    return [("aten::mm", [300 + j2]), ("aten::add", [150 + j]), ("aten::copy_", [200 + j, 200 - j2, 200 + j2]),
            ("aten::relu", [60 + j, 60 - j2]), ("aten::sum", [40])]


def run(which):
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}]
    for k in range(STEPS):
        s = T0 + k * STEP_US
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{k}", "pid": 1, "tid": 1,
                   "ts": s, "dur": STEP_US})
        ev.append({"ph": "X", "cat": "python_function", "name": "nn.Module: Net_0", "pid": 1, "tid": 1,
                   "ts": s + 10, "dur": STEP_US - 100})
        t = s + 20
        for name, durs in calls(which, k):
            for d in durs:
                ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": t, "dur": d})
                t += d + 10
    return {"traceEvents": ev, "displayTimeUnit": "ms"}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for which in ("a", "b"):
        with open(os.path.join(out, f"calls_{which}.json"), "w") as f:
            json.dump(run(which), f, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
