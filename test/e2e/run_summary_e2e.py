#!/usr/bin/env python3
"""Runs `aiprof summary --format json` on every real fixture (kineto/ and
torch-cpu/ traces) and on the shipped samples, and checks each result against
summary_oracle.py, an independent Python computation over the same JSON."""
import atexit
import shutil
import argparse
import glob
import os
import subprocess
import sys
import tempfile


def traces(fixtures, sample_dir):
    out = sorted(glob.glob(os.path.join(fixtures, "kineto", "*.json.gz")))
    for f in sorted(glob.glob(os.path.join(fixtures, "torch-cpu", "*.json"))):
        if not f.endswith(".meta.json"):
            out.append(f)
    out += sorted(glob.glob(os.path.join(sample_dir, "*.json*")))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--sample", required=True)
    a = ap.parse_args()
    files = traces(a.fixtures, a.sample)
    if len(files) < 30:
        print("expected the real fixtures beside the repo, found %d traces under %s" % (len(files), a.fixtures))
        return 1
    passed, failed = 0, 0
    tmp = tempfile.mkdtemp(prefix="aiprof_e2e_")
    atexit.register(shutil.rmtree, tmp, True)
    for path in files:
        for top in ("0", "10"):
            out = os.path.join(tmp, "summary.json")
            p = subprocess.run([a.aiprof, "summary", path, "--format", "json", "--top", top, "-o", out],
                               capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                print("FAIL %s: aiprof exited %d: %s" % (path, p.returncode, p.stderr))
                failed += 1
                continue
            c = subprocess.run([sys.executable, a.oracle, "compare", path, out],
                               capture_output=True, text=True, timeout=300)
            label = "%s (--top %s)" % (os.path.basename(path), top)
            if c.returncode == 0:
                passed += 1
                print("ok   %s: %s" % (label, c.stdout.strip()))
            else:
                failed += 1
                print("FAIL %s:\n%s%s" % (label, c.stdout, c.stderr))
    print("summary e2e: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
