#!/usr/bin/env python3
"""Builds an N-rank job for `aiprof cluster` at scale from a real two-rank
fixture pair: --source kineto, the HTA pair
(kineto/...trace_filter__sampled_rank-{0,1}.json.gz: NCCL SendRecv kernels),
or --source ascend, the torch_npu pair (ascend-pt/level1/rank{0,1}_ascend_pt:
HCCL all-reduces; only trace_view.json, without its call stacks, and
profiler_info are written per rank, since the CSV side files carry
timestamps of their own).

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
  * on the planted slow rank (--slow-rank), one op (the planted op: by
    default the last non-collective device op before the first collective)
    lasting --delay-ms longer at its last instance before each collective;
    the device work after it up to that collective starts that much later,
    and so does the collective
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


from decimal import Decimal


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


class Kineto:
    def __init__(self, fixtures):
        base = os.path.join(fixtures, "kineto", "HolisticTraceAnalysis__tests__data__trace_filter__sampled_rank-")
        self.docs = [load(base + "%d.json.gz" % r) for r in (0, 1)]
        self.templates = [d["traceEvents"] for d in self.docs]

    def is_collective(self, e):
        return e.get("ph") == "X" and e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower()

    def is_device(self, e):
        return e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")

    def write(self, out, r, ranks, events, level):
        t = self.docs[r % 2]
        doc = {k: v for k, v in t.items() if k != "traceEvents"}
        doc["distributedInfo"] = dict(t.get("distributedInfo", {}), rank=r, world_size=ranks)
        for e in events:
            if "ts" in e:
                e["ts"] = round(e["ts"], 3)
        doc["traceEvents"] = events
        path = os.path.join(out, "rank-%d.json" % r)
        text = json.dumps(doc, separators=(",", ":"))
        if level > 0:
            with gzip.open(path + ".gz", "wt", compresslevel=level) as f:
                f.write(text)
        else:
            with open(path, "w") as f:
                f.write(text)


class Ascend:
    """ts in µs as exact decimal text: kept as integer ns here."""

    def __init__(self, fixtures):
        self.templates, self.infos, self.hccl, self.device = [], [], [], []
        for r in (0, 1):
            root = os.path.join(fixtures, "ascend-pt", "level1", "rank%d_ascend_pt" % r)
            with open(os.path.join(root, "ASCEND_PROFILER_OUTPUT", "trace_view.json")) as f:
                events = json.load(f)
            with open(os.path.join(root, "profiler_info_%d.json" % r)) as f:
                self.infos.append(json.load(f))
            names = {e["pid"]: e["args"].get("name") for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
            self.hccl.append({p for p, n in names.items() if n == "HCCL"})
            self.device.append({p for p, n in names.items() if n == "Ascend Hardware"})
            for e in events:
                if "ts" in e:
                    e["ts"] = Decimal(str(e["ts"]))
                if "dur" in e:
                    e["dur"] = Decimal(str(e["dur"]))
                args = e.get("args")
                if isinstance(args, dict) and "Call stack" in args:
                    e["args"] = {k: v for k, v in args.items() if k != "Call stack"}
            self.templates.append(events)
        self.pids = set().union(*self.hccl), set().union(*self.device)

    def is_collective(self, e):
        return e.get("ph") == "X" and e.get("pid") in self.pids[0] and e.get("name", "").startswith("hcom_")

    def is_device(self, e):
        return e.get("ph") == "X" and e.get("pid") in self.pids[1]

    def write(self, out, r, ranks, events, level):
        root = os.path.join(out, "rank%d_ascend_pt" % r)
        os.makedirs(os.path.join(root, "ASCEND_PROFILER_OUTPUT"), exist_ok=True)
        for e in events:
            if "ts" in e:
                e["ts"] = "%.3f" % e["ts"]
            if "dur" in e:
                e["dur"] = float(e["dur"])
        with open(os.path.join(root, "ASCEND_PROFILER_OUTPUT", "trace_view.json"), "w") as f:
            json.dump(events, f, separators=(",", ":"))
        info = json.loads(json.dumps(self.infos[r % 2]))
        info["rank_id"] = r
        with open(os.path.join(root, "profiler_info_%d.json" % r), "w") as f:
            json.dump(info, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--source", choices=["kineto", "ascend"], default="kineto")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--offset-ms", type=float, default=40.0)
    ap.add_argument("--jitter-us", type=float, default=20.0)
    ap.add_argument("--slow-rank", type=int, default=-1, help="default: a random rank")
    ap.add_argument("--delay-ms", type=float, default=0.0,
                    help="default: 5 ms, or half the shortest collective when that is shorter (a late rank's "
                         "collective still ends with the others' only if the delay is shorter than it)")
    ap.add_argument("--planted-op", default="")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compress", type=int, default=1, help="gzip level (0: plain JSON)")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    src = Kineto(a.fixtures) if a.source == "kineto" else Ascend(a.fixtures)
    num = float if a.source == "kineto" else Decimal
    is_collective, is_device = src.is_collective, src.is_device
    templates = src.templates
    colls = [sorted((e for e in t if is_collective(e)), key=lambda e: e["ts"]) for t in templates]
    n = min(len(c) for c in colls)
    common_end = [max(c[i]["ts"] + c[i]["dur"] for c in colls) for i in range(n)]
    common_arrival = [colls[0][i]["ts"] for i in range(n)]
    planted = a.planted_op
    if not planted:
        first = colls[0][0]["ts"]
        before = [e for e in templates[0]
                  if is_device(e) and not is_collective(e) and e["ts"] + e["dur"] <= first]
        planted = max(before, key=lambda e: e["ts"] + e["dur"])["name"]
    slow = a.slow_rank if a.slow_rank >= 0 else rnd.randrange(a.ranks)
    shortest_us = min(float(common_end[i] - common_arrival[i]) for i in range(n))
    if a.delay_ms <= 0:
        a.delay_ms = round(min(5.0, shortest_us / 2000.0), 3)
    delay_us = num(a.delay_ms * 1000.0)
    jit = lambda lo, hi: num(round(rnd.uniform(lo, hi), 3))
    os.makedirs(a.out, exist_ok=True)
    for r in range(a.ranks):
        events = [dict(e) for e in templates[r % 2]]
        mine = sorted((e for e in events if is_collective(e)), key=lambda e: e["ts"])
        for i, c in enumerate(mine[:n]):
            c["ts"] = common_arrival[i] + jit(0, a.jitter_us)
            c["dur"] = max(num(1), common_end[i] + jit(-a.jitter_us, a.jitter_us) - c["ts"])
            if "args" in c:
                c["args"] = dict(c["args"])
        if r == slow:
            starts = [c["ts"] for c in mine]
            xs = [e for e in events if e.get("ph") == "X" and e.get("name") == planted]
            if not xs:
                sys.exit("rank %d's template has no op named %r to plant" % (slow, planted))
            # The last instance before each collective is the planted one: the
            # rank reaches that collective delay_us late.
            chosen = {}
            for x in xs:
                nxt = min((st for st in starts if st >= x["ts"] + x["dur"]), default=None)
                if nxt is not None and (nxt not in chosen or chosen[nxt]["ts"] < x["ts"]):
                    chosen[nxt] = x
            for nxt, x in chosen.items():
                end = x["ts"] + x["dur"]
                x["dur"] += delay_us
                for e in events:
                    if e is x or not is_device(e) or not (end <= e["ts"] < nxt):
                        continue
                    e["ts"] += delay_us
                for c in mine:
                    if c["ts"] == nxt:
                        e_end = c["ts"] + c["dur"]
                        c["ts"] += delay_us
                        c["dur"] = max(num(1), e_end - c["ts"])
        offset = jit(-a.offset_ms * 1000.0, a.offset_ms * 1000.0)
        for e in events:
            if "ts" in e:
                e["ts"] = e["ts"] + offset
        src.write(a.out, r, a.ranks, events, a.compress)
    print(json.dumps({"source": a.source, "ranks": a.ranks, "slow_rank": slow, "planted_op": planted, "delay_ms": a.delay_ms,
                      "offset_ms": a.offset_ms, "collectives_per_rank": n}))


if __name__ == "__main__":
    sys.exit(main())
