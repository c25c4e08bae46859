#!/usr/bin/env python3
"""How each malloc handles the CPU pair programs' memory, unprofiled: the
table in docs/analyses.md ("page_faults") that rule page_fault_churn's
allocator suggestions rest on.

For each program of test/data/pairs/gen_pairs.py named here and each
allocator setting (glibc defaults, glibc fixed thresholds, jemalloc
defaults, jemalloc with torch 1.13's launcher setting, jemalloc with decay
off, tcmalloc), runs the program in a fresh /usr/bin/python3 process
without any profiler: 3 warm-up and 30 timed steps, perf_counter and
getrusage(RUSAGE_SELF).ru_minflt around each step. ROUNDS rounds, the
settings interleaved within a round (this VM changes speed within seconds:
compare settings within a round). Prints one line per run and a Markdown
table (mean ms per step over the rounds' runs, min-max; median faults per
step).

  bench/allocator_faults.py [--rounds 2] [--programs zero_grad_set_to_none:before,...]

Needs libjemalloc2 and libtcmalloc-minimal4 (scripts/deps/capture.txt) and
Debian's python3-torch. Not part of CI (timings belong in benchmarks).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
JE = "libjemalloc.so.2"
TC = "libtcmalloc_minimal.so.4"
SETTINGS = [
    ("glibc defaults", {}),
    ("glibc fixed thresholds", {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432"}),
    ("jemalloc defaults", {"LD_PRELOAD": JE}),
    ("jemalloc, torch 1.13 launcher", {"LD_PRELOAD": JE, "MALLOC_CONF": "oversize_threshold:1,background_thread:true,metadata_thp:auto"}),
    ("jemalloc, decay off", {"LD_PRELOAD": JE, "MALLOC_CONF": "oversize_threshold:1,background_thread:true,metadata_thp:auto,"
                                                             "dirty_decay_ms:-1,muzzy_decay_ms:-1"}),
    ("tcmalloc", {"LD_PRELOAD": TC}),
]
PROGRAMS = ["zero_grad_set_to_none:before", "zero_grad_set_to_none:after", "unfused_layernorm:before",
            "checkpoint_every_step:before", "defensive_clone:before", "unfused_gelu:before"]

CHILD = r'''
import json, resource, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import gen_pairs as gp
import torch
torch.set_num_threads(1)
torch.manual_seed(0)
mode, step = gp.PAIRS[sys.argv[2]](sys.argv[3] == "before")
ts, fs = [], []
for i in range(33):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t0 = time.perf_counter()
    step(i)
    t1 = time.perf_counter()
    f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    if i >= 3:
        ts.append((t1 - t0) * 1e3)
        fs.append(f1 - f0)
print(json.dumps({"malloc": gp._mapped_allocator(), "mean_ms": statistics.mean(ts),
                  "median_faults": statistics.median(fs), "mean_faults": statistics.mean(fs)}))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    a = ap.parse_args()
    results = {}
    for r in range(a.rounds):
        for prog in a.programs.split(","):
            pair, variant = prog.split(":")
            for name, extra in SETTINGS:
                env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "MALLOC_CONF", "GLIBC_TUNABLES")}
                env.update(extra)
                p = subprocess.run(["/usr/bin/python3", "-c", CHILD, os.path.join(REPO, "test", "data", "pairs"), pair, variant],
                                   capture_output=True, text=True, env=env, cwd=REPO)
                if p.returncode != 0:
                    sys.stderr.write(p.stderr)
                    raise SystemExit("allocator_faults.py: %s %s under %s failed" % (pair, variant, name))
                d = json.loads(p.stdout.strip().splitlines()[-1])
                print("round %d  %-30s %-32s %8.2f ms  faults median %5d mean %6.0f  (%s)"
                      % (r + 1, prog, name, d["mean_ms"], d["median_faults"], d["mean_faults"], d["malloc"]), flush=True)
                results.setdefault(prog, {}).setdefault(name, []).append(d)
    print("\n| program | " + " | ".join(n for n, _ in SETTINGS) + " |")
    print("|---|" + "---|" * len(SETTINGS))
    for prog, by in results.items():
        cells = []
        for name, _ in SETTINGS:
            runs = by[name]
            ms = [x["mean_ms"] for x in runs]
            cells.append("%.1f–%.1f ms, %d" % (min(ms), max(ms), statistics.median(x["median_faults"] for x in runs)))
        print("| %s | %s |" % (prog, " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
