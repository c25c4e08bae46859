#!/usr/bin/env python3
"""How long a thread that starts or exits waits while another thread
flushes in ring mode, for two builds of the SDK, interleaved run by run.

    bench/sdk_registry_wait.py BEFORE_BUILD AFTER_BUILD [--threads 8]
        [--ring-mb 8] [--flushes 5] [--rounds 5] [--dir DIR]

Compiles bench/sdk_registry_wait.c once (against include/), then runs it
with each build's libaiprof_sdk.so (LD_LIBRARY_PATH=<build>), before and
after alternately: THREADS threads fill their rings (AIPROF_MODE=ring,
AIPROF_RING_MB) and keep recording, the main thread flushes FLUSHES times
into DIR (default: a temporary folder under the working directory), and a
churn thread starts and joins short threads all the while. Per build: the
median over rounds of each run's median flush time, and of the largest
wait of a starting thread (its first SDK call, which registers it) and of
an exiting one (its join), and the threads that waited more than 5 ms.
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
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--ring-mb", default="8")
    p.add_argument("--flushes", type=int, default=5)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--dir", default=None)
    a = p.parse_args()
    builds = {"before": os.path.abspath(a.before), "after": os.path.abspath(a.after)}
    for name, b in builds.items():
        if not os.path.exists(os.path.join(b, "libaiprof_sdk.so")):
            sys.exit(f"{b}: no libaiprof_sdk.so ({name} build)")
    work = tempfile.mkdtemp(prefix="sdk-registry-", dir=a.dir or os.getcwd())
    try:
        prog = os.path.join(work, "sdk_registry_wait")
        subprocess.run(["cc", "-O2", "-o", prog, os.path.join(HERE, "sdk_registry_wait.c"),
                        "-I", os.path.join(REPO, "include"), "-L", builds["after"], "-laiprof_sdk", "-lpthread"],
                       check=True)
        got = {name: [] for name in builds}
        for r in range(a.rounds):
            for name in (("before", "after") if r % 2 == 0 else ("after", "before")):
                env = dict(os.environ, LD_LIBRARY_PATH=builds[name], AIPROF_MODE="ring",
                           AIPROF_RING_MB=a.ring_mb, AIPROF_LIVE="0")
                out = subprocess.run([prog, str(a.threads), str(a.flushes), os.path.join(work, "flush.aiprof")],
                                     env=env, check=True, capture_output=True, text=True).stdout
                flush = [float(line.split()[1]) for line in out.splitlines() if line.startswith("flush ")]
                fields = {line.split()[0]: line.split()[1:] for line in out.splitlines()
                          if line.startswith(("register ", "exit "))}
                row = {"flush": statistics.median(flush),
                       "reg_n": int(fields["register"][0]), "reg_max": float(fields["register"][3]),
                       "reg_over": int(fields["register"][4]),
                       "exit_max": float(fields["exit"][3]), "exit_over": int(fields["exit"][4])}
                got[name].append(row)
                print(f"round {r + 1} {name:6} flush {row['flush']:.3f} s; threads {row['reg_n']}: register max "
                      f"{row['reg_max']:.1f} ms ({row['reg_over']} > 5 ms), exit max {row['exit_max']:.1f} ms "
                      f"({row['exit_over']} > 5 ms)", flush=True)
        print(f"\n{a.threads} threads, {a.ring_mb} MiB rings, {a.flushes} flushes a run, {a.rounds} rounds (medians)")
        print("| build | flush (s) | threads started | register max (ms) | > 5 ms | exit max (ms) | > 5 ms |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, rows in got.items():
            med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            print(f"| {name} | {med['flush']:.3f} | {med['reg_n']:.0f} | {med['reg_max']:.1f} | {med['reg_over']:.0f} "
                  f"| {med['exit_max']:.1f} | {med['exit_over']:.0f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
