#!/usr/bin/env python3
"""Independent oracle for the attribution tree (src/analysis/attribution).

Reads a Kineto JSON trace with Python only and, for every ProfilerStep#N of
the main thread, cuts the step into elementary intervals at every slice
boundary, finds by brute force the innermost non-structure slice covering
each interval on the step's thread (else on the other threads of the
process, most op time first), and sums the interval lengths per node path
and per time class. A different algorithm from the C++ sweep (no stack, no
holes list), with the same definitions:
  structure: ProfilerStep#N, "PyTorch Profiler (N)", record_param_comms,
  python_function frames other than "nn.Module: ...", the Trace span;
  module: names with '#', DataLoader spans, nn.Module frames, user_annotation;
  classes: data loading (DataLoader and below), sync (Synchronize), launch
  (other runtime), op, module code, untraced.

usage: attribution_oracle.py TRACE.json[.gz] [--skip-steps N]
prints JSON: per step wall, by class (ns), and the root's children totals.
"""
import gzip
import json
import sys
from collections import defaultdict
from decimal import Decimal


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)["traceEvents"]  # exact µs (ts > 2^53 ns)


def is_structure(e):
    n, c = e["name"], e.get("cat", "")
    if n.startswith("ProfilerStep#") or n.startswith("PyTorch Profiler (") or n in ("record_param_comms", "Trace"):
        return True
    if c == "Trace" or c == "gpu_user_annotation":
        return True
    if c == "python_function" and not n.startswith("nn.Module: "):
        return True
    return False


def own_class(e):
    n, c = e["name"], e.get("cat", "").lower()
    if "dataloader" in n.lower():
        return "data loading"
    if c in ("runtime", "cuda_runtime", "cuda_driver"):
        return "synchronisation" if ("synchronize" in n.lower() and "wait" not in n.lower()) else "launch"
    if c in ("operator", "cpu_op"):
        return "module code" if "#" in n else "op"
    return "module code"


def us_to_ns(x):
    return int(Decimal(x) * 1000)


def main():
    path = sys.argv[1]
    skip = int(sys.argv[sys.argv.index("--skip-steps") + 1]) if "--skip-steps" in sys.argv else 0
    ev = [e for e in load(path) if e.get("ph") == "X" and "dur" in e]
    for e in ev:
        e["s"] = us_to_ns(e["ts"])
        e["e"] = e["s"] + us_to_ns(e["dur"])
    steps = sorted((e for e in ev if e["name"].startswith("ProfilerStep#")), key=lambda e: e["s"])
    main_tid, pid = steps[0]["tid"], steps[0]["pid"]
    op_time = defaultdict(int)
    for e in ev:
        if e["pid"] == pid and e.get("cat", "").lower() in ("operator", "cpu_op"):
            op_time[e["tid"]] += e["e"] - e["s"]
    threads = [main_tid] + sorted((t for t in op_time if t != main_tid), key=lambda t: -op_time[t])
    by_thread = defaultdict(list)
    for e in ev:
        if e["pid"] == pid and e["tid"] in threads and not str(e["tid"]).startswith("stream"):
            by_thread[e["tid"]].append(e)
    out = []
    for st in steps[skip:]:
        a, b = st["s"], st["e"]
        cands = {t: [e for e in by_thread[t] if e["s"] < b and e["e"] > a] for t in threads}
        cuts = {a, b}
        for t in threads:
            for e in cands[t]:
                cuts.update(x for x in (e["s"], e["e"]) if a < x < b)
        cuts = sorted(cuts)
        classes = defaultdict(int)
        top = defaultdict(int)
        for lo, hi in zip(cuts, cuts[1:]):
            chosen = None
            for t in threads:
                cover = [e for e in cands[t] if e["s"] <= lo and e["e"] >= hi and not (e is st)]
                # Innermost: latest start, then shortest (the C++ order: start, longest first).
                cover.sort(key=lambda e: (e["s"], -(e["e"] - e["s"])))
                nodes = [e for e in cover if not is_structure(e)]
                if nodes:
                    chosen = (t, nodes)
                    break
            if chosen is None:
                classes["untraced"] += hi - lo
                top["(host time outside any recorded op)"] += hi - lo
                continue
            t, nodes = chosen
            cls = own_class(nodes[-1])
            for e in nodes:  # a wait class of an ancestor holds for everything under it
                if own_class(e) in ("data loading", "synchronisation"):
                    cls = own_class(e)
                    break
            classes[cls] += hi - lo
            name = nodes[0]["name"]
            if name.startswith("nn.Module: "):
                name = name[len("nn.Module: "):]
            top[name if t == main_tid else "[other thread %s]" % t] += hi - lo
        out.append({"step": st["name"], "wall_ns": b - a, "by_class_ns": dict(classes), "top_ns": dict(top)})
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
