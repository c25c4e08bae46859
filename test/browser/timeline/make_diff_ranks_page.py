#!/usr/bin/env python3
"""Browser test of `aiprof diff A B --timeline` on multi-rank runs: HTA's two
sampled ranks (../shared/fixtures/kineto, trace_filter/sampled_rank-{0,1})
copied into two rank folders (a multi-rank run each: docs/importers.md,
"Multi-rank folders"), run B's ranks in the other order of copying so the
folder importer, not the order, decides the ranks; then the diff with
--timeline. The checks (timeline_diff_checks.js, AIPROF_EXPECT_RANKS=2) read
every rank of both runs from the page.

  make_diff_ranks_page.py --aiprof AIPROF --fixtures DIR --html OUT.html
"""
import argparse
import os
import shutil
import subprocess
import sys

RANKS = ["HolisticTraceAnalysis__tests__data__trace_filter__sampled_rank-0.json.gz",
         "HolisticTraceAnalysis__tests__data__trace_filter__sampled_rank-1.json.gz"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--aiprof", required=True)
    p.add_argument("--fixtures", required=True)
    p.add_argument("--html", required=True)
    a = p.parse_args()
    out_dir = os.path.join(os.path.dirname(os.path.abspath(a.html)), "diff_ranks_runs")
    shutil.rmtree(out_dir, ignore_errors=True)
    runs = []
    for run, order in (("a", RANKS), ("b", list(reversed(RANKS)))):
        d = os.path.join(out_dir, run)
        os.makedirs(d)
        for name in order:
            rank = name.rsplit("sampled_", 1)[1]  # rank-0.json.gz
            shutil.copyfile(os.path.join(a.fixtures, "kineto", name), os.path.join(d, rank))
        runs.append(d)
    r = subprocess.run([a.aiprof, "diff", runs[0], runs[1], "--timeline", a.html,
                        "-o", os.path.join(out_dir, "diff.txt")])
    sys.exit(r.returncode)


if __name__ == "__main__":
    main()
