#!/usr/bin/python3
"""Checks `aiprof analyze`'s cross-rank figures against cross_rank_oracle.py.

Usage: check_analyze.py AIPROF FOLDER [FOLDER...]
Each FOLDER holds one Kineto JSON per rank (the rank from its
distributedInfo). Compares collectives matched and unmatched, the median end
spread, whether the clocks agree, and per rank matched / wait / lateness / transfer, exact in ns.
Exit 1 on any difference.
"""
import gzip, json, os, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))


def rank_files(folder):
    out = []
    for f in sorted(os.listdir(folder)):
        if f.endswith(".json") or f.endswith(".json.gz"):
            p = os.path.join(folder, f)
            with (gzip.open if p.endswith(".gz") else open)(p, "rt") as h:
                out.append(f"{json.load(h)['distributedInfo']['rank']}={p}")
    return out


def main():
    aiprof, folders = sys.argv[1], sys.argv[2:]
    bad = 0
    env = dict(os.environ, AIPROF_CALIBRATE="0")
    for folder in folders:
        want = json.loads(subprocess.run([sys.executable, os.path.join(here, "cross_rank_oracle.py")] +
                                         rank_files(folder), check=True, capture_output=True, text=True).stdout)
        got = json.loads(subprocess.run([aiprof, "analyze", "--only", "communication", "--format", "json", folder],
                                        check=True, capture_output=True, text=True, env=env).stdout)
        blocks = got["sections"]["communication"]["blocks"]
        values = next(b["values"] for b in blocks if b["type"] == "values" and "matched" in b["values"])
        ranks = next(b["rows"] for b in blocks if b.get("key") == "ranks")
        checks = [("matched", values["matched"]["value"], want["matched"]),
                  ("unmatched", values["unmatched"]["value"], want["unmatched"]),
                  ("end_spread_p50_ns", values["end_spread_p50_ns"]["value"], int(want["end_spread_p50_ns"])),
                  ("clocks_agree", values["clocks_agree"]["value"], want["clocks_agree"])]
        for row in ranks:
            w = want["ranks"][str(row["rank"])]
            for k in ("matched", "wait_ns", "lateness_ns", "transfer_ns"):
                checks.append((f"rank {row['rank']} {k}", row[k], w[k]))
        if len(ranks) != len(want["ranks"]):
            checks.append(("ranks", len(ranks), len(want["ranks"])))
        for name, g, w in checks:
            if g != w:
                bad += 1
                print(f"{folder}: {name}: aiprof {g}, oracle {w}")
        print(f"{folder}: {len(checks)} figures compared")
    sys.exit(1 if bad else 0)


main()
