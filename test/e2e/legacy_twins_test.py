#!/usr/bin/env python3
"""torch's two exports of one profiling session diagnose alike.

../shared/fixtures/torch-cpu holds each case as <case>.kineto.json (the
Kineto layout, with cat, shapes, memory) and <case>.legacy.json (verbatim
prof.export_chrome_trace() of torch 1.13 without Kineto: no cat, pid
"CPU functions", no shapes), from the same session (the folder's README).
aiprof reads the legacy file's operators as cpu_op and its other ranges as
user annotations (docs/importers.md), so both files must fire the same
rules, with impacts within a few points, except the rules that need what
the legacy export leaves out:
  layout_conversion  (input shapes: Input Dims)
  long_tail_ops      (instances are grouped by name and Input Dims: by name
                      alone, as the legacy file allows, one op's larger
                      shapes look like its tail; malloc_noisy: 29% of the
                      step by name, 2.8% by shape, batch_norm's 8 ms
                      instances among 1.3 ms ones of one shape)
An independent check of the legacy import against the same run's other file.

What-if replays the legacy file too: its ops sit in a process named by a
label ("CPU functions"), which aiprof read as a lane of spans, not a host
thread, so every clause changed nothing ("Changed: 0 slice durations",
+0.00%; audit3 item 1). For each case, `whatif --scenario "remove OP"` of
the heaviest aten op must give each step's serial arithmetic from the raw
JSON: the step's span minus the union of that op's instances inside it
(the legacy files are one thread, so the replay is that arithmetic).
"""
import argparse
import glob
import json
import os
import subprocess
import sys

NEEDS_MORE_THAN_LEGACY = {"layout_conversion", "long_tail_ops"}
SHARE_TOL = 0.02  # of the step: the legacy export drops nested same-name ops (README)


def load_events(path):
    with open(path) as f:
        ev = json.load(f)
    return ev["traceEvents"] if isinstance(ev, dict) else ev


def serial_removal(events, op):
    """{step number: step span minus the union of `op`'s instances in it}, ns."""
    out = {}
    for st in events:
        name = st.get("name", "")
        if st.get("ph") != "X" or not name.startswith("ProfilerStep#"):
            continue
        a, b = st["ts"], st["ts"] + st["dur"]
        spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                       if e.get("ph") == "X" and e.get("name") == op and a <= e["ts"] and e["ts"] + e["dur"] <= b)
        covered, end = 0, float("-inf")
        for s, t in spans:
            if t > end:
                covered += t - max(s, end)
                end = t
        out[int(name[len("ProfilerStep#"):])] = (st["dur"] - covered) * 1000
    return out


def whatif_removal_problems(aiprof, path):
    events = load_events(path)
    if len({e.get("tid") for e in events if e.get("ph") == "X"}) != 1:
        return ["not one thread: the serial arithmetic does not apply"]
    totals = {}
    for e in events:
        if e.get("ph") == "X" and e.get("name", "").startswith("aten::"):
            totals[e["name"]] = totals.get(e["name"], 0) + e["dur"]
    op = max(totals, key=totals.get)
    want = serial_removal(events, op)
    r = subprocess.run([aiprof, "whatif", path, "--no-calibrate", "--scenario", "remove " + op, "--format", "json"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return ["whatif exit %d: %s" % (r.returncode, r.stderr[-300:])]
    sc = json.loads(r.stdout)["scenarios"][0]
    problems = []
    if sc["slices_changed"] == 0:
        problems.append("whatif 'remove %s' changed no slice" % op)
    got = {s["step"]: s["predicted_ns"] for s in sc["steps"]}
    if set(got) != set(want):
        problems.append("steps: whatif %s, raw %s" % (sorted(got), sorted(want)))
    for n in sorted(set(got) & set(want)):
        if abs(got[n] - want[n]) > 1000 + 1e-4 * want[n]:
            problems.append("step %d 'remove %s': whatif %.0f ns, raw step minus the op %.0f ns" % (n, op, got[n], want[n]))
    return problems


def findings(aiprof, path):
    r = subprocess.run([aiprof, "diagnose", path, "--no-calibrate", "--format", "json"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise SystemExit("%s: aiprof diagnose exit %d: %s" % (path, r.returncode, r.stderr[-300:]))
    return {f["rule"]: f["impact"]["share"] for f in json.loads(r.stdout)["findings"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    cases = sorted(p[:-len(".kineto.json")] for p in glob.glob(os.path.join(a.fixtures, "torch-cpu", "*.kineto.json")))
    cases = [c for c in cases if os.path.exists(c + ".legacy.json")]
    if len(cases) < 5:
        print("FAIL: fewer than 5 twin cases under %s/torch-cpu" % a.fixtures)
        return 1
    bad = 0
    for c in cases:
        k = {r: s for r, s in findings(a.aiprof, c + ".kineto.json").items() if r not in NEEDS_MORE_THAN_LEGACY}
        l = {r: s for r, s in findings(a.aiprof, c + ".legacy.json").items() if r not in NEEDS_MORE_THAN_LEGACY}
        name = os.path.basename(c)
        problems = whatif_removal_problems(a.aiprof, c + ".legacy.json")
        if set(k) != set(l):
            problems.append("rules: kineto %s, legacy %s" % (sorted(k), sorted(l)))
        for r in set(k) & set(l):
            if abs(k[r] - l[r]) > SHARE_TOL:
                problems.append("%s: impact %.1f%% (kineto) vs %.1f%% (legacy)" % (r, 100 * k[r], 100 * l[r]))
        print("%s %s: %s" % ("FAIL" if problems else "ok  ", name,
                             "; ".join(problems) or ", ".join("%s %.1f%%" % (r, 100 * l[r]) for r in sorted(l))))
        bad += bool(problems)
    print("legacy twins: %d of %d cases alike" % (len(cases) - bad, len(cases)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
