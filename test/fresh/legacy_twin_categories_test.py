#!/usr/bin/env python3
"""torch's legacy export files each name as Kineto does (test/data/fresh/README.md).

bwd_rf.{kineto,legacy}.json are one profiling session written twice: the
Kineto layout carries each event's "cat", the legacy export none, so aiprof
files legacy events by name. For every name in both files, the category of
its slices in the legacy file (`aiprof query`) must be the "cat" the Kineto
twin wrote for it (read here from the JSON), and the two must get the same
diagnosis (the set of `aiprof diagnose` bottlenecks). Before the fix the
custom autograd.Function's forward ("Scaled") was a user_annotation in the
legacy file and diagnose found a host_region there that the Kineto twin has
not.

usage: legacy_twin_categories_test.py --aiprof BIN --data test/data/fresh
"""
import argparse
import json
import os
import subprocess
import sys


def aiprof_json(aiprof, *args):
    out = subprocess.run([aiprof, "--no-calibrate"] + list(args), capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("FAIL: aiprof %s exited %d: %s" % (" ".join(args), out.returncode, out.stderr.strip()))
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    failures = []
    for case in ("bwd_rf",):
        kineto = os.path.join(args.data, case + ".kineto.json")
        legacy = os.path.join(args.data, case + ".legacy.json")
        written = {}
        for e in json.load(open(kineto))["traceEvents"]:
            if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation"):
                written.setdefault(e["name"], set()).add(e["cat"])
        r = aiprof_json(args.aiprof, "query", legacy, "SELECT DISTINCT name, category FROM slices", "--format", "json")
        filed = {}
        for name, category in r["rows"]:
            filed.setdefault(name, set()).add(category)
        common = sorted(set(written) & set(filed))
        wrong = [(n, sorted(filed[n]), sorted(written[n])) for n in common if filed[n] != written[n]]
        if len(common) < 40 or "Scaled" not in common:
            failures.append("%s: only %d names in both files" % (case, len(common)))
        for n, got, want in wrong:
            failures.append("%s: %r is %s in the legacy file, %s in its Kineto twin" % (case, n, got, want))
        found = [sorted(f["bottleneck"] for f in aiprof_json(args.aiprof, "diagnose", p, "--format", "json")["findings"])
                 for p in (kineto, legacy)]
        if found[0] != found[1]:
            failures.append("%s: diagnose finds %s on the Kineto file, %s on the legacy one" % (case, found[0], found[1]))
        if not wrong and found[0] == found[1]:
            print("ok %s: %d names filed as in the Kineto twin; diagnosis %s on both" % (case, len(common), found[0]))
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
