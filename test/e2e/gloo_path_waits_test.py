#!/usr/bin/env python3
"""A CPU gloo job's critical path names the rank each step waited for, and
"Slowest steps" names each step's rank, checked against the raw JSON of
test/data/crash_gloo/late_past_timeout (a real 3-rank gloo job, Debian torch
1.13; steps 0-3 complete, rank 2 came 60 s late to step 4's all-reduce).

Before, analyze's critical path said "Waited for rank —" on every step: the
ranks' clocks agree only once aligned by the collectives' ends, so the path
is not joined across ranks, and a gloo rank's main thread waits for the
all-reduce its own thread runs with nothing linking the two. The pairing
knows each collective's last arrival (NameWaitedRanks, critical_path.cc).
And "Slowest steps" listed ProfilerStep#4 twice (rank 2's 60.13 s and rank
0's 4.16 s) with no rank column.

Expected side, from the raw files only: gloo's all-reduce ends at about the
same moment on every rank, so the rank that arrived last at a collective is
the one whose gloo:all_reduce slice is shortest (no clock needed), and each
other rank waited about its own duration minus that. Only collectives whose
shortest slice is at least 5 ms shorter than the next are checked (step 3's
two shortest differ by 0.08 ms: no rank to name with confidence), and only
ranks that waited at least 50 ms there.

  gloo_path_waits_test.py AIPROF TEST_DATA_DIR
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def load(path):
    with gzip.open(path, "rt") as f:
        d = json.load(f)
    return [e for e in (d if isinstance(d, list) else d["traceEvents"]) if e.get("ph") == "X"]


def table(doc, section, key):
    for b in doc["sections"][section]["blocks"]:
        rows = b.get("rows") if isinstance(b, dict) else None
        if rows and key in rows[0]:
            return rows
    return []


def main():
    aiprof, data = sys.argv[1], sys.argv[2]
    folder = os.path.join(data, "crash_gloo", "late_past_timeout")
    steps, colls = {}, {}  # rank -> {step: (ts, dur)}, (step) -> {rank: dur}
    for rank in range(3):
        ev = load(os.path.join(folder, "rank%d.pt.trace.json.gz" % rank))
        mine = {int(e["name"].split("#")[1]): (e["ts"], e["dur"]) for e in ev if e["name"].startswith("ProfilerStep#")}
        steps[rank] = mine
        for e in ev:
            if e["name"] != "gloo:all_reduce":
                continue
            for n, (ts, dur) in mine.items():
                if ts <= e["ts"] < ts + dur:
                    colls.setdefault(n, {})[rank] = e["dur"]
    expected = {}  # (rank, step) -> (last rank, wait us)
    for n, durs in colls.items():
        if len(durs) != 3 or max(durs.values()) > 1e6:  # step 4: rank 2 came 60 s late, others timed out
            continue
        order = sorted(durs, key=durs.get)
        if durs[order[1]] - durs[order[0]] < 5000:
            continue
        for rank, d in durs.items():
            if rank != order[0] and d - durs[order[0]] >= 50000:
                expected[(rank, n)] = (order[0], d - durs[order[0]])
    check(len(expected) >= 2, "raw: %d (rank, step) waits to check: %s" % (len(expected), sorted(expected.items())))

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, AIPROF_CALIBRATE="0", XDG_CONFIG_HOME=tmp, XDG_DATA_HOME=tmp)
        p = subprocess.run([aiprof, "analyze", "--only", "steps,critical_path", "--format", "json", folder],
                           capture_output=True, text=True, env=env, timeout=300)
        if p.returncode != 0:
            sys.exit("aiprof analyze failed (%d): %s" % (p.returncode, p.stderr[-2000:]))
        doc = json.loads(p.stdout)

    path = {(r["rank"], r["step"]): r for r in table(doc, "critical_path", "waited_rank")}
    for (rank, n), (last, wait_us) in sorted(expected.items()):
        r = path.get((rank, n))
        if r is None:
            check(False, "rank %d step %d: not in the critical path's steps table" % (rank, n))
            continue
        check(r["waited_rank"] == last and r["at"] == "gloo:all_reduce",
              "rank %d step %d: waited for rank %s at %s; raw: rank %d, the shortest all-reduce"
              % (rank, n, r["waited_rank"], r["at"], last))
        late = (r["late_ns"] or 0) / 1e3
        check(abs(late - wait_us) <= 0.25 * wait_us,
              "rank %d step %d: late by %.0f us; raw about %.0f us (own all-reduce minus the last rank's)"
              % (rank, n, late, wait_us))
    for r in path.values():
        check(r["waited_rank"] != r["rank"], "rank %d step %s: does not wait for itself" % (r["rank"], r["step"]))

    # Slowest steps: a rank column, each row's rank the one whose step it is.
    slow = table(doc, "steps", "step_ns")
    check(len(slow) >= 2 and all("rank" in r for r in slow), "slowest steps: %d rows, each with a rank" % len(slow))
    for r in slow:
        n = int(r["step"].split("#")[1])
        owners = [k for k, v in steps.items() if n in v and abs(v[n][1] * 1000 - r["step_ns"]) <= 1000]
        check(r.get("rank") in owners, "slowest step %s of %d ns: rank %s; raw: ranks %s with that span"
              % (r["step"], r["step_ns"], r.get("rank"), owners))
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
