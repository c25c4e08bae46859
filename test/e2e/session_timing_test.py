#!/usr/bin/env python3
"""One analysis session per command (issue 21): `--timing` lists every phase
that ran, so each analysis, the rules and the diagnosis must appear at most
once, and each input must be imported once, for `report` with `--before`
(its validation and its embedded views included), a bare `view --timeline`,
`analyze`, `diagnose` and `suggest`. Runs on the shipped ResNet50 pair."""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def phases(aiprof, *args):
    p = subprocess.run([aiprof, *args, "--timing"], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit("aiprof %s failed: %s" % (" ".join(args), p.stderr))
    # Phases are the indented lines (the unindented ones are a command's own marks).
    names = re.findall(r"^aiprof:   (\S+)\s+[\d.]+ ms$", p.stderr, re.M)
    return collections.Counter(names)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    before = os.path.join(a.data, "resnet50_num_workers_0.pt.trace.json.gz")
    after = os.path.join(a.data, "resnet50_num_workers_4.pt.trace.json.gz")
    tmp = tempfile.mkdtemp(prefix="aiprof_timing_")
    runs = {
        "report --before (html)": ["report", after, "--before", before, "-o", os.path.join(tmp, "r.html")],
        "report (md)": ["report", after, "-o", os.path.join(tmp, "r.md")],
        "view --timeline": ["view", after, "--timeline", "-o", os.path.join(tmp, "t.html")],
        "analyze": ["analyze", after, "-o", os.path.join(tmp, "a.txt")],
        "diagnose": ["diagnose", after, "-o", os.path.join(tmp, "d.txt")],
        "suggest": ["suggest", after, "-o", os.path.join(tmp, "s.txt")],
    }
    for what, args in runs.items():
        c = phases(a.aiprof, *args)
        analyses = {k: n for k, n in c.items() if k.startswith("analysis.")}
        check(analyses, what + ": --timing lists the analyses it ran (%r)" % dict(c))
        for name, n in c.items():
            # report --before: the before run's own analyses (for the
            # prediction of its fix) are phases "before.*", once each too.
            own = name[len("before."):] if name.startswith("before.") else name
            if own.startswith("analysis.") or own in ("rules", "diagnose", "suggest"):
                check(n == 1, "%s: %s ran %d times" % (what, name, n))
        want_imports = 2 if "--before" in args else 1
        check(c["import"] == want_imports, "%s: %d imports, expected %d" % (what, c["import"], want_imports))
        if what.startswith("report") or what == "view --timeline":
            check(c["diagnose"] == 1, what + ": the diagnosis ran once")
        # The timeline reads every gap from the one breakdown, not a second one.
        if what in ("report --before (html)", "view --timeline"):
            check("analysis.breakdown_all_gaps" not in c, what + ": gaps computed a second time to keep them all")
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
