#!/usr/bin/env python3
"""A what-if replay with nothing changed reproduces every measured step, on
every real trace in ../shared/fixtures and the samples in test/data.

The predict trial (D18) found three traces where a scenario matching nothing
already moved the step: HTA's MTIA trace +328% (a sync bound to device work
that ended after the call returned), SGLang's prefill/decode +89% (a
trace without steps ended its measured window at the host's last event, its
replayed one at the last device work) and nsys CloverLeaf -2.5% (a periodic
step's start stayed put while its end lost the time after its last op).
Every prediction on such a trace carries that error, so this runs them all.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

SUFFIXES = (".json", ".json.gz", ".sqlite", ".aiprof")


def inputs(fixtures, data):
    out = []
    for root in (fixtures, data):
        for dirpath, dirnames, filenames in os.walk(root):
            # test/data/pairs: its first set only (its subfolders repeat the same programs)
            skip = ("fuzz", "golden", "rules") + (tuple(dirnames) if os.path.basename(dirpath) == "pairs" else ())
            dirnames[:] = sorted(d for d in dirnames if d not in skip)
            if os.path.basename(dirpath) in ("level0", "level1"):  # torch_npu runs: one folder, ranks merged
                out.append(dirpath)
                dirnames[:] = []
                continue
            out += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(SUFFIXES)]
    return out


def replay(aiprof, path):
    p = subprocess.run([aiprof, "whatif", path, "--scenario", "remove no_such_op_in_any_trace", "--format", "json"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, AIPROF_CALIBRATE="0"))
    if p.returncode != 0:
        return path, None, p.stderr.strip().splitlines()[-1:] if p.stderr else []
    return path, json.loads(p.stdout)["scenarios"][0], None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    paths = inputs(a.fixtures, a.data)
    failures, replayed, refused = [], 0, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for path, s, err in pool.map(lambda p: replay(a.aiprof, p), paths):
            if s is None:
                refused += 1  # not a trace aiprof reads (a sidecar JSON, a hand-made bad input)
                continue
            replayed += 1
            for st in s["steps"]:
                if st["predicted_ns"] != st["measured_ns"]:
                    failures.append("%s: step %s measured %d ns, replayed with nothing changed %d ns"
                                    % (path, st["step"], st["measured_ns"], st["predicted_ns"]))
                    break
    print("%d traces replayed, %d inputs not read as traces" % (replayed, refused))
    for f in failures:
        print("FAIL:", f)
    if replayed < 40:
        print("FAIL: only %d traces replayed (expected the fixtures' 40 or more)" % replayed)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
