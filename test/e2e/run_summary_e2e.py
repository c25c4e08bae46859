#!/usr/bin/env python3
"""Runs `aiprof summary --format json` on every real fixture (kineto/ and
torch-cpu/ traces) and on the shipped samples, and checks each result against
summary_oracle.py, an independent Python computation over the same JSON.

The oracle reads each trace once (its JSON with exact decimals: about five
times aiprof's CPU time) and both outputs, --top 0 and --top 10, are
compared with that one reading."""
import atexit
import shutil
import argparse
import decimal
import glob
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import traceback


def traces(fixtures, sample_dir):
    out = sorted(glob.glob(os.path.join(fixtures, "kineto", "*.json.gz")))
    for f in sorted(glob.glob(os.path.join(fixtures, "torch-cpu", "*.json"))):
        if not f.endswith(".meta.json"):
            out.append(f)
    # The repository's samples are copies of fixtures (for checkouts without
    # ../shared): each is checked once, as the fixture where both are here.
    def same_bytes(a, b):
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, "rb") as x, open(b, "rb") as y:
            return x.read() == y.read()
    fixtures_found = list(out)
    for f in sorted(glob.glob(os.path.join(sample_dir, "*.json*"))):
        if not any(same_bytes(f, g) for g in fixtures_found):
            out.append(f)
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
    spec = importlib.util.spec_from_file_location("summary_oracle", a.oracle)
    oracle_mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oracle_mod)
    passed, failed = 0, 0
    tmp = tempfile.mkdtemp(prefix="aiprof_e2e_")
    atexit.register(shutil.rmtree, tmp, True)
    for path in files:
        outs = []
        for top in ("0", "10"):
            out = os.path.join(tmp, "summary.%s.json" % top)
            p = subprocess.run([a.aiprof, "summary", path, "--format", "json", "--top", top, "-o", out],
                               capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                print("FAIL %s: aiprof exited %d: %s" % (path, p.returncode, p.stderr))
                failed += 1
                continue
            outs.append((top, out))
        if not outs:
            continue
        # summary_oracle.py's `compare` (its main()), the trace read once;
        # compare() only reads the oracle's figures. An error of the oracle
        # fails this trace's outputs, as the oracle's own exit status did.
        try:
            doc, events = oracle_mod.load_trace(path)
            oracle = oracle_mod.compute(doc, events)
        except Exception:  # noqa: BLE001 (any error of the oracle is this trace's failure)
            for top, _ in outs:
                print("FAIL %s (--top %s):\nsummary_oracle: %s"
                      % (os.path.basename(path), top, traceback.format_exc()))
            failed += len(outs)
            continue
        for top, out in outs:
            label = "%s (--top %s)" % (os.path.basename(path), top)
            try:
                got = json.loads(oracle_mod.load_json_bytes(out), parse_float=decimal.Decimal, parse_int=int)
            except (OSError, ValueError) as e:
                print("FAIL %s:\nsummary_oracle: cannot read aiprof output %s: %s" % (label, out, e))
                failed += 1
                continue
            try:
                mm, (n_ops, n_devs, n_steps) = oracle_mod.compare(oracle, got)
            except Exception:  # noqa: BLE001
                print("FAIL %s:\nsummary_oracle: %s" % (label, traceback.format_exc()))
                failed += 1
                continue
            if mm:
                failed += 1
                print("FAIL %s:\nMISMATCH %s vs %s: %d problem(s)" % (label, path, out, len(mm.items)))
                for m in mm.items[:oracle_mod.Mismatches.LIMIT]:
                    print("  " + m)
                if len(mm.items) > oracle_mod.Mismatches.LIMIT:
                    print("  ... and %d more" % (len(mm.items) - oracle_mod.Mismatches.LIMIT))
            else:
                passed += 1
                print("ok   %s: OK %d %d %d" % (label, n_ops, n_devs, n_steps))
    print("summary e2e: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
