#!/usr/bin/env python3
"""Builds an N-rank Kineto job from the real HTA two-rank fixture pair
(trace_filter/sampled_rank-{0,1}.json.gz), for `aiprof cluster` at scale.

Rank r is a copy of the real rank r % 2, with:
  * collective instance i (the i-th NCCL kernel of the rank) arriving and
    ending at the same moments on every rank: the real rank 0's arrival and
    the later of the two real ranks' ends, each plus a per-rank,
    per-instance jitter of up to --jitter-us. (The real pair's SendRecv
    kernels neither start nor end together: rank 1 reaches them ~25 ms
    later, a real straggler that, copied onto half the ranks, would make a
    two-humped job with no single slow rank.) Everything else is the rank's
    own real template;
  * a per-rank clock offset, uniform in [-offset, +offset] (--offset-ms, tens
    of ms: larger than the planted delay), added to every timestamp;
  * on the planted slow rank (--slow-rank), every instance of one op (the
    planted op: by default the last non-NCCL kernel before the first
    collective) lasting --delay-ms longer; the device work after it up to the
    next collective starts that much later, and so does the collective
    (whose end stays, since every rank ends it together): the other ranks
    wait for it.
Prints the planted rank and op as JSON on the last line.
"""
import argparse
import copy
import gzip
import json
import os
import random
import sys


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def is_collective(e):
    return e.get("ph") == "X" and e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower()


def is_device(e):
    return e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--offset-ms", type=float, default=40.0)
    ap.add_argument("--jitter-us", type=float, default=20.0)
    ap.add_argument("--slow-rank", type=int, default=-1, help="default: a random rank")
    ap.add_argument("--delay-ms", type=float, default=5.0)
    ap.add_argument("--planted-op", default="")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compress", type=int, default=1, help="gzip level (0: plain JSON)")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    base = os.path.join(a.fixtures, "kineto", "HolisticTraceAnalysis__tests__data__trace_filter__sampled_rank-")
    templates = [load(base + "%d.json.gz" % r) for r in (0, 1)]
    colls = [sorted((e for e in t["traceEvents"] if is_collective(e)), key=lambda e: e["ts"]) for t in templates]
    n = min(len(c) for c in colls)
    common_end = [max(c[i]["ts"] + c[i]["dur"] for c in colls) for i in range(n)]
    common_arrival = [colls[0][i]["ts"] for i in range(n)]
    planted = a.planted_op
    if not planted:
        first = colls[0][0]["ts"]
        before = [e for e in templates[0]["traceEvents"]
                  if is_device(e) and not is_collective(e) and e["ts"] + e["dur"] <= first]
        planted = max(before, key=lambda e: e["ts"] + e["dur"])["name"]
    slow = a.slow_rank if a.slow_rank >= 0 else rnd.randrange(a.ranks)
    delay_us = a.delay_ms * 1000.0
    os.makedirs(a.out, exist_ok=True)
    for r in range(a.ranks):
        t = templates[r % 2]
        doc = {k: v for k, v in t.items() if k != "traceEvents"}
        doc["distributedInfo"] = dict(t.get("distributedInfo", {}), rank=r, world_size=a.ranks)
        events = [dict(e) for e in t["traceEvents"]]
        mine = sorted((e for e in events if is_collective(e)), key=lambda e: e["ts"])
        for i, c in enumerate(mine[:n]):
            c["ts"] = common_arrival[i] + rnd.uniform(0, a.jitter_us)
            c["dur"] = max(1.0, common_end[i] + rnd.uniform(-a.jitter_us, a.jitter_us) - c["ts"])
            if "args" in c:
                c["args"] = dict(c["args"])
        if r == slow:
            starts = [c["ts"] for c in mine]
            xs = [e for e in events if e.get("ph") == "X" and e.get("name") == planted]
            if not xs:
                sys.exit("rank %d's template has no op named %r to plant" % (slow, planted))
            for x in xs:
                end = x["ts"] + x["dur"]
                x["dur"] += delay_us
                nxt = min((s for s in starts if s >= end), default=None)
                if nxt is None:
                    continue
                for e in events:
                    if e is x or not is_device(e) or not (end <= e["ts"] < nxt):
                        continue
                    e["ts"] += delay_us
                for c in mine:
                    if c["ts"] == nxt:
                        e_end = c["ts"] + c["dur"]
                        c["ts"] += delay_us
                        c["dur"] = max(1.0, e_end - c["ts"])
        offset = rnd.uniform(-a.offset_ms, a.offset_ms) * 1000.0
        for e in events:
            if "ts" in e and isinstance(e["ts"], (int, float)):
                e["ts"] = round(e["ts"] + offset, 3)
        doc["traceEvents"] = events
        path = os.path.join(a.out, "rank-%d.json" % r)
        text = json.dumps(doc, separators=(",", ":"))
        if a.compress > 0:
            with gzip.open(path + ".gz", "wt", compresslevel=a.compress) as f:
                f.write(text)
        else:
            with open(path, "w") as f:
                f.write(text)
    print(json.dumps({"ranks": a.ranks, "slow_rank": slow, "planted_op": planted, "delay_ms": a.delay_ms,
                      "offset_ms": a.offset_ms, "collectives_per_rank": n}))


if __name__ == "__main__":
    sys.exit(main())
