#!/usr/bin/python3
"""Independent cross-rank collective figures from raw Kineto JSON traces.

Usage: cross_rank_oracle.py RANK=PATH ... [--by-position]

Written apart from aiprof's code (src/analysis/communication/
collective_pairing.h) to check its figures. Collectives: device kernels
named nccl*/rccl* when a trace has any, else the host user annotations
"gloo:<op>". Each is put in the step (ProfilerStep#N) whose window
[start_N, start_next) of its own rank holds the time it was issued: a
kernel's launch call (the runtime event of the same correlation id), a gloo
span's start. Pairing: per (group, type), the i-th instance of step N on
every rank holding the (group, type), when each of those ranks has a step;
else the i-th over the whole trace (--by-position forces that). Per matched
instance (a = arrivals, e = ends): wait_r = max(a) - a_r, lateness_r =
a_r - min(a), transfer_r = max(0, e_r - max(a)); end spread max(e) - min(e).
Clocks agree when the median spread is at most 25% of the median matched
duration (over every rank's duration in every matched instance; the mean let
a few long collectives make any spread look small). When they agree, an instance where some rank ends before the last
arrival by more than the median spread did not complete (a peer failed in it) and is left
out of the per-rank sums. Prints JSON, integer ns.
"""
import bisect, gzip, json, re, statistics, sys
from decimal import Decimal


def ns(v):
    return v * 1000 if isinstance(v, int) else int((Decimal(str(v)) * 1000).to_integral_value())


def load(p):
    with (gzip.open if p.endswith(".gz") else open)(p, "rt") as f:
        t = json.load(f)
    return t["traceEvents"] if isinstance(t, dict) else t


def ctype(name):
    n = re.sub(r"[^a-z]", "", name.lower())
    for k, v in (("allreduce", "all_reduce"), ("allgather", "all_gather"), ("reducescatter", "reduce_scatter"),
                 ("sendrecv", "send_recv"), ("broadcast", "broadcast"), ("alltoall", "all_to_all")):
        if k in n:
            return v
    return "other"


def rank_collectives(ev):
    xs = [e for e in ev if e.get("ph") == "X" and "ts" in e and "dur" in e]
    steps = sorted((ns(e["ts"]), int(e["name"].split("#")[1])) for e in xs
                   if e.get("name", "").startswith("ProfilerStep#") and e["name"].split("#")[1].isdigit())
    launch = {}
    for e in xs:
        c = (e.get("args") or {}).get("correlation")
        if c is not None and e.get("cat") in ("cuda_runtime", "cuda_driver", "runtime"):
            launch[c] = ns(e["ts"])
    dev = [e for e in xs if e.get("cat") == "kernel" and re.match(r"(nccl|rccl)", e["name"], re.I)]
    sel = dev or [e for e in xs if e.get("cat") == "user_annotation" and e["name"].startswith("gloo:")]
    starts = [s for s, _ in steps]
    seq = {}
    for e in sel:
        a = ns(e["ts"])
        args = e.get("args") or {}
        issued = launch.get(args.get("correlation"), a) if dev else a
        i = bisect.bisect_right(starts, issued) - 1
        step = steps[i][1] if i >= 0 else -1
        key = (args.get("Process Group Name", ""), ctype(args.get("Collective name", e["name"])))
        seq.setdefault(key, []).append((a, a + ns(e["dur"]), step))
    for v in seq.values():
        v.sort(key=lambda x: x[0])
    return seq, bool(steps)


def main():
    by_position = "--by-position" in sys.argv
    ranks = {}
    for arg in (a for a in sys.argv[1:] if not a.startswith("--")):
        r, p = arg.split("=", 1)
        ranks[int(r)] = rank_collectives(load(p))
    inst, unmatched, by_step_keys, position_keys = [], 0, 0, 0
    for key in sorted({k for seq, _ in ranks.values() for k in seq}):
        holders = [r for r in sorted(ranks) if key in ranks[r][0]]
        by_step = not by_position and all(any(x[2] >= 0 for x in ranks[r][0][key]) for r in holders)
        buckets = {}
        for r in holders:
            for x in ranks[r][0][key]:
                buckets.setdefault(x[2] if by_step else 0, {}).setdefault(r, []).append(x)
        if len(holders) >= 2:
            by_step_keys += by_step
            position_keys += not by_step
        for b in sorted(buckets):
            per = buckets[b]
            n = min(len(per.get(r, [])) for r in holders) if len(holders) >= 2 else 0
            unmatched += sum(len(v) - n for v in per.values())
            for i in range(n):
                inst.append({r: per[r][i] for r in holders})
    spreads = [max(x[1] for x in m.values()) - min(x[1] for x in m.values()) for m in inst]
    durs = [x[1] - x[0] for m in inst for x in m.values()]
    p50 = statistics.median(spreads) if spreads else -1
    usual = statistics.median(durs) if durs else 0
    agree = bool(inst) and usual > 0 and p50 <= 0.25 * usual
    out = {r: dict(matched=0, comm_ns=0, wait_ns=0, lateness_ns=0, transfer_ns=0) for r in ranks}
    incomplete = 0
    for m in inst:
        first, last = min(x[0] for x in m.values()), max(x[0] for x in m.values())
        if agree and min(x[1] for x in m.values()) < last - max(p50, 0):
            incomplete += 1
            continue
        for r, (a, e, _) in m.items():
            o = out[r]
            o["matched"] += 1
            o["comm_ns"] += e - a
            o["wait_ns"] += last - a
            o["lateness_ns"] += a - first
            o["transfer_ns"] += max(0, e - last)
    print(json.dumps(dict(matched=len(inst), unmatched=unmatched, incomplete=incomplete, keys_by_step=by_step_keys,
                          keys_by_position=position_keys, end_spread_p50_ns=p50, clocks_agree=agree,
                          ranks={str(r): v for r, v in out.items()}), indent=1))


main()
