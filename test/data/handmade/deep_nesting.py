#!/usr/bin/env python3
"""Hand-made: writes a CPU trace whose ops sit under DEPTH nested
record_function labels (user_annotation r0..r6 in turn), one ProfilerStep,
and DEPTH/40 float -> double -> float round trips at the bottom, each with an
aten::mul between the two casts (figures by hand: 2500 trips at DEPTH 100000,
each 10 + 10 us of cast ops, cast_roundtrip_ns 50 ms over one step).

It shows analyses that walk each op's ancestors: their time grows with
DEPTH x ops (quadratic) instead of the slice count. Usage:
  deep_nesting.py DEPTH OUT.json
  aiprof --threads 1 analyze --timing --only fusion,layout OUT.json
(measured on the 2-core VM, --threads 1: fusion 414 ms at DEPTH 50000 and
2009 ms at 100000 before the one-pass fix, 7 and 8 ms after; the round
trips' search was 21% of a perf profile of --only layout at 100000 before,
0.03% after. Layout's top-level ops and kernels' conversions and the long
tails' top-level test, one pass since: --only layout 1213/1117 ms -> 6.3/4.8
ms, --only long_tail 1156 -> 7.7 ms at 100000, two interleaved runs each,
outputs byte-identical; --only roofline 408/415 -> 19/16 ms.)"""
import json
import sys


def main():
    depth, out = int(sys.argv[1]), sys.argv[2]
    ev = []

    def x(cat, name, ts, dur, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}
        if args:
            e["args"] = args
        ev.append(e)

    def cast(ts, src, dst):
        x("cpu_op", "aten::to", ts, 10, {"Input type": [src, "Scalar"], "Input Dims": [[4, 4], []]})
        x("cpu_op", "aten::_to_copy", ts + 1, 8, {"Input type": [src, "Scalar"], "Input Dims": [[4, 4], []]})
        x("cpu_op", "aten::copy_", ts + 2, 6, {"Input type": [dst, src], "Input Dims": [[4, 4], [4, 4]]})

    x("user_annotation", "ProfilerStep#1", 0, 4 * depth + 1000)
    for d in range(depth):
        x("user_annotation", f"r{d % 7}", d, 4 * depth + 1000 - 2 * d)
    base = depth + 10
    for k in range(depth // 40):
        t = base + 40 * k
        cast(t, "float", "double")
        x("cpu_op", "aten::mul", t + 12, 3)
        cast(t + 16, "double", "float")
    with open(out, "w") as f:
        json.dump({"traceEvents": ev}, f)


if __name__ == "__main__":
    main()
