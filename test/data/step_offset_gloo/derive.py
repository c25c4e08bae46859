#!/usr/bin/python3
"""Derives rank1_a_step_behind/ from recorded/ (hand-made from a real run).

recorded/ is a real 3-rank CPU job (gloo), test/data/crash_gloo/gen_crash.py
in MODE none: 6 steps, one all-reduce each, no failure. The derived folder
is the same job as if rank 1's profiler had started one iteration later:
rank 1's events before its ProfilerStep#1 are dropped and its
ProfilerStep#N is renamed #N-1, so its step N is the others' step N+1.
Ranks 0 and 2 are copied unchanged.
Usage: derive.py (in this folder)
"""
import gzip, json, re, shutil

for r in (0, 2):
    shutil.copy(f"recorded/rank{r}.pt.trace.json.gz", f"rank1_a_step_behind/rank{r}.pt.trace.json.gz")
events = json.load(gzip.open("recorded/rank1.pt.trace.json.gz"))
start = min(e["ts"] for e in events if e.get("name") == "ProfilerStep#1")
kept = []
for e in events:
    if "ts" in e and e["ts"] < start:
        continue
    m = re.fullmatch(r"ProfilerStep#(\d+)", e.get("name", ""))
    if m:
        e["name"] = f"ProfilerStep#{int(m.group(1)) - 1}"
    kept.append(e)
with gzip.GzipFile("rank1_a_step_behind/rank1.pt.trace.json.gz", "wb", mtime=0) as f:
    f.write(json.dumps(kept).encode())
