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
"""
import argparse
import glob
import json
import os
import subprocess
import sys

NEEDS_MORE_THAN_LEGACY = {"layout_conversion", "long_tail_ops"}
SHARE_TOL = 0.02  # of the step: the legacy export drops nested same-name ops (README)


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
        problems = []
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
