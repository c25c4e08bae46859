#!/usr/bin/env python3
"""Time of aiprof_flush_to for two builds of the SDK, interleaved run by run.

    bench/sdk_flush_cost.py BEFORE_BUILD AFTER_BUILD [--threads 4]
        [--spans 4000000] [--flushes 3] [--rounds 5] [--dir DIR]

Compiles bench/sdk_flush_cost.c once (against include/), then runs it with
each build's libaiprof_sdk.so (LD_LIBRARY_PATH=<build>), before and after
alternately, in two modes: "quiet" (the recording threads have stopped) and
"busy" (they keep recording, about 100,000 spans a second each, while the
main thread flushes: each flush then holds a little more than the last).
Each run records THREADS x SPANS spans (2 events, 32 bytes a span), then
flushes FLUSHES times into DIR (default: a temporary folder under the
working directory, so on the file system a program would write to). Per
mode: the median flush time of each build, and the median of the per-round
after/before ratios, for the first flush of a run, the later ones (which
find the earlier flushes' writeback still going) and all. The spill files
go to DIR too; each run's files are removed after it.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--spans", type=int, default=4000000)
    p.add_argument("--flushes", type=int, default=3)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--dir", default=None)
    a = p.parse_args()
    builds = {"before": os.path.abspath(a.before), "after": os.path.abspath(a.after)}
    for name, b in builds.items():
        if not os.path.exists(os.path.join(b, "libaiprof_sdk.so")):
            sys.exit(f"{b}: no libaiprof_sdk.so ({name} build)")
    work = tempfile.mkdtemp(prefix="sdk-flush-", dir=a.dir or os.getcwd())
    try:
        prog = os.path.join(work, "sdk_flush_cost")
        subprocess.run(["cc", "-O2", "-o", prog, os.path.join(HERE, "sdk_flush_cost.c"),
                        "-I", os.path.join(REPO, "include"), "-L", builds["after"], "-laiprof_sdk", "-lpthread"],
                       check=True)
        runs_of = {(m, b): [] for m in ("quiet", "busy") for b in builds}  # each run's flush times
        size = {}
        for r in range(a.rounds):
            for mode in ("quiet", "busy"):
                for name, b in builds.items():
                    run_dir = os.path.join(work, f"{name}-{mode}-{r}")
                    os.mkdir(run_dir)
                    env = dict(os.environ, LD_LIBRARY_PATH=b, AIPROF_OUTPUT=run_dir + "/")
                    out = subprocess.run([prog, str(a.threads), str(a.spans), str(a.flushes), mode,
                                          os.path.join(run_dir, "flush.aiprof")],
                                         env=env, check=True, capture_output=True, text=True).stdout
                    secs = [float(line.split()[0]) for line in out.splitlines()]
                    size.setdefault(mode, []).append(int(out.splitlines()[0].split()[1]))
                    runs_of[(mode, name)].append(secs)
                    shutil.rmtree(run_dir)
                    print(f"round {r + 1} {mode:5} {name:6} " + " ".join(f"{s:.3f}" for s in secs), flush=True)
        print(f"\n{a.threads} threads x {a.spans} spans; {a.flushes} flushes a run, {a.rounds} rounds, "
              f"in {os.path.dirname(work)}")
        print("| mode | first file (MB) | flushes | before (s) | after (s) | after/before |")
        print("|---|---:|---|---:|---:|---:|")
        for mode in ("quiet", "busy"):
            mb = f"{statistics.median(size[mode]) / 1e6:.0f}"
            for label, pick in (("first", slice(0, 1)), ("later", slice(1, None)), ("all", slice(None))):
                if label != "all" and a.flushes == 1:
                    continue
                med = {}
                ratios = []
                for name in builds:
                    runs = runs_of[(mode, name)]
                    med[name] = statistics.median([x for r in runs for x in r[pick]])
                for rb, ra in zip(runs_of[(mode, "before")], runs_of[(mode, "after")]):
                    ratios.append(statistics.median(ra[pick]) / statistics.median(rb[pick]))
                print(f"| {mode} | {mb} | {label} | {med['before']:.3f} | {med['after']:.3f} "
                      f"| {statistics.median(ratios):.3f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
