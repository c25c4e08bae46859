#!/usr/bin/python3
"""Writes the hand-made per-rank Kineto traces of test/cross_rank/data/.

Hand-made (not from a profiler): each rank runs ProfilerStep#N on the host
at N*1000 us (1000 us long) and two NCCL all-reduces per step, launched at
+100 and +900 us; the device runs them at +200..+400 and +1050..+1300 us,
so the second runs after the next step began on the host. A late rank's
kernels start `late` us later and end with the others'.

  late_start/   4 ranks; rank 3's profile began a step later (steps 2-3
                only); rank 2 arrives 10 us late.
  failed_peer/  3 ranks of a 4-rank job (rank 3 crashed and wrote no
                trace); steps 1-2, rank 2 10 us late; step 2's second
                all-reduce failed: rank 0 arrives at +1050 and leaves with
                an error at +1055, rank 1 arrives at +1040 and waits until
                +1600, rank 2 arrives at +1070 and leaves at +1075.
  tie/          3 ranks, steps 1-2; ranks 1 and 2 both arrive 10 us late.
  gloo_cpu/     3 CPU-only ranks (gloo: the collectives are host spans
                "gloo:all_reduce" at the same times, no device activity);
                steps 1-2, rank 2 10 us late.
Usage: make_traces.py OUT_DIR (test/cross_rank/data)
"""
import json, os, sys


def rank_trace(rank, world, steps, late, failed=None):
    ev, corr = [], 0
    for n in steps:
        s = n * 1000
        ev.append(dict(ph="X", cat="user_annotation", name=f"ProfilerStep#{n}", pid=1, tid=1, ts=s, dur=1000))
        for k, (launch, run, end) in enumerate(((100, 200, 400), (900, 1050, 1300))):
            corr += 1
            a, e = s + run + late, s + end
            if failed and (n, k) == failed[0]:
                a, e = s + failed[1][0], s + failed[1][1]
            ev.append(dict(ph="X", cat="cuda_runtime", name="cudaLaunchKernel", pid=1, tid=1, ts=s + launch, dur=5,
                           args=dict(correlation=corr)))
            ev.append(dict(ph="X", cat="kernel", name="ncclKernel_AllReduce_RING_LL_Sum_float", pid=0, tid=7, ts=a,
                           dur=e - a, args=dict(device=0, stream=7, correlation=corr)))
    return dict(distributedInfo=dict(backend="nccl", rank=rank, world_size=world), traceEvents=ev)


def gloo_trace(rank, world, steps, late):
    ev = []
    for n in steps:
        s = n * 1000
        ev.append(dict(ph="X", cat="user_annotation", name=f"ProfilerStep#{n}", pid=1, tid=1, ts=s, dur=1000))
        for run, end in ((200, 400), (650, 900)):
            ev.append(dict(ph="X", cat="user_annotation", name="gloo:all_reduce", pid=1, tid=1, ts=s + run + late,
                           dur=end - run - late))
    return dict(distributedInfo=dict(backend="gloo", rank=rank, world_size=world), traceEvents=ev)


def write(folder, rank, trace):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"rank{rank}.json"), "w") as f:
        json.dump(trace, f, indent=0)
        f.write("\n")


def main():
    out = sys.argv[1]
    for r in range(4):
        write(f"{out}/late_start", r, rank_trace(r, 4, [2, 3] if r == 3 else [1, 2, 3], 10 if r == 2 else 0))
    fail = {0: (1050, 1055), 1: (1040, 1600), 2: (1070, 1075)}
    for r in range(3):
        write(f"{out}/failed_peer", r, rank_trace(r, 4, [1, 2], 10 if r == 2 else 0, ((2, 1), fail[r])))
    for r in range(3):
        write(f"{out}/tie", r, rank_trace(r, 3, [1, 2], 10 if r in (1, 2) else 0))
    for r in range(3):
        write(f"{out}/gloo_cpu", r, gloo_trace(r, 3, [1, 2], 10 if r == 2 else 0))


main()
