#!/usr/bin/env python3
"""Writes the cluster report page of a two-rank job made of the hand-made
hostile-names trace, with a hostile host name and a hostile file name, for
the browser test browser_cluster_html_hostile_names."""
import argparse
import os
import shutil
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--aiprof", required=True)
    p.add_argument("--trace", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    job = a.out + "-job"
    shutil.rmtree(job, ignore_errors=True)
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(job)
    shutil.copy(a.trace, os.path.join(job, "rank-0.json"))
    shutil.copy(a.trace, os.path.join(job, "rank-1.json"))
    # A broken rank whose file name is markup: listed in the problems table.
    with open(os.path.join(job, "rank-2 <img src=x onerror=alert(3)>.json"), "w") as f:
        f.write('{"traceEvents":[{"ph":"X","name":')
    r = subprocess.run([a.aiprof, "cluster", "analyze", job, "-o", a.out, "--world-size", "4",
                        "--host", "<img src=x onerror=alert(1)>"])
    sys.exit(r.returncode)


if __name__ == "__main__":
    main()
