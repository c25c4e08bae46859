#!/usr/bin/env python3
"""A legacy gloo trace's waits are claimed by its gloo threads (audit3 item 4).

test/data/step_offset_gloo/recorded: three ranks of a real gloo job, written
by torch 1.13's legacy export_chrome_trace (every event "pid": "CPU
functions"; the main thread's ops on tid 1, gloo's worker threads' only
record_function labels `gloo:all_reduce` on tids 2 and 3). The builder read
that labelled process as lanes of spans, so the attribution tree called the
main thread's waits "untraced" (the docs' "Holes" rule gives them to another
thread of the process that runs a node then). Checked against the raw JSON,
per step, mean over all 18 steps (the window keeps them all):

  holes          = step span minus the union of the main thread's slices
  untraced       = holes minus their intersection with the other threads' spans
  communication  = that intersection + the main thread's c10d:: op time
"""
import argparse
import glob
import gzip
import json
import os
import subprocess
import sys


def merge(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def overlap(xs, ys):
    i = j = t = 0
    while i < len(xs) and j < len(ys):
        a, b = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        t += max(0, b - a)
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return t


def raw_figures(folder):
    steps = untraced = comm = 0.0
    for f in sorted(glob.glob(os.path.join(folder, "rank*.pt.trace.json.gz"))):
        with gzip.open(f) as fh:
            ev = json.load(fh)
        ev = ev["traceEvents"] if isinstance(ev, dict) else ev
        xs = [e for e in ev if e.get("ph") == "X"]
        marks = [e for e in xs if e["name"].startswith("ProfilerStep#")]
        main = marks[0]["tid"]
        others = merge([(e["ts"], e["ts"] + e["dur"]) for e in xs if e["tid"] != main])
        for st in marks:
            a, b = st["ts"], st["ts"] + st["dur"]
            inside = [e for e in xs if e["tid"] == main and e is not st and e["ts"] < b and e["ts"] + e["dur"] > a]
            busy = merge([(max(a, e["ts"]), min(b, e["ts"] + e["dur"])) for e in inside])
            holes, cur = [], a
            for x, y in busy:
                if x > cur:
                    holes.append([cur, x])
                cur = max(cur, y)
            if cur < b:
                holes.append([cur, b])
            claimed = overlap(holes, others)
            untraced += sum(y - x for x, y in holes) - claimed
            comm += claimed + sum(e["dur"] for e in inside if e["name"].startswith("c10d::"))
            steps += 1
    return steps, 1000 * untraced / steps, 1000 * comm / steps  # ns per step


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    folder = os.path.join(a.data, "step_offset_gloo", "recorded")
    steps, untraced, comm = raw_figures(folder)
    r = subprocess.run([a.aiprof, "analyze", folder, "--no-calibrate", "--only", "attribution", "--format", "json"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        print("FAIL: aiprof analyze exit %d: %s" % (r.returncode, r.stderr[-300:]))
        return 1
    v = json.loads(r.stdout)["sections"]["attribution"]["sections"]["attribution"]["blocks"][1]["values"]
    got = {k: v[k]["value"] for k in ("steps", "untraced_ns", "communication_ns")}
    want = {"steps": steps, "untraced_ns": untraced, "communication_ns": comm}
    bad = [k for k in want if abs(got[k] - want[k]) > 1000 + 1e-4 * want[k]]
    for k in want:
        print("%s %s: aiprof %.0f, raw %.0f" % ("FAIL" if k in bad else "ok  ", k, got[k], want[k]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
