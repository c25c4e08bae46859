#!/usr/bin/env python3
"""`aiprof cluster` end to end (label heavy: runs mpirun).

1. The real two-rank torch_npu run: `cluster analyze` gives the wait ratio
   and slow-rank excess that `aiprof analyze` of the folder publishes.
2. A generated 8-rank Kineto job (bench/cluster_job.py, clock offsets of
   tens of ms, one planted slow op): the planted rank and op are found.
3. For both: `mpirun -np 2 --oversubscribe aiprof cluster analyze` writes
   byte-identical reports to the single-process path; an input that cannot
   be read (hand-made truncated JSON) is listed with its reason by both,
   and the rest analysed.
4. Defects of the cluster trial (hand-made one-kernel traces): two inputs of
   rank 0 mapped into one folder by two `cluster map` calls keep both
   digests and the reduce names both (D2); map and reduce of inputs that
   all lack a rank exit non-zero (D8); MPI processes that list different
   inputs stop the job naming the process (D5).
"""
import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != 0:
        sys.exit("FAIL: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def same_outputs(aiprof, job, work, name):
    single, mpi = os.path.join(work, name + "-single"), os.path.join(work, name + "-mpi")
    run([aiprof, "cluster", "analyze", job, "-o", single, "--host", "h"])
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_plm_rsh_agent="")
    run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", aiprof, "cluster", "analyze", job, "-o", mpi,
         "--host", "h"], env)
    for f in ("cluster.json", "cluster.md", "cluster.html"):
        if not filecmp.cmp(os.path.join(single, f), os.path.join(mpi, f), shallow=False):
            sys.exit("FAIL: %s: %s differs between mpirun -np 2 and one process" % (name, f))
    with open(os.path.join(single, "cluster.json")) as f:
        return json.load(f)


def run_rc(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    return p.returncode, p.stdout, p.stderr


def hand_made_trace(path, rank=None):
    """A one-kernel Kineto trace (hand-made), with distributedInfo when `rank` is given."""
    t = {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0, "dur": 10,
                          "args": {"device": 0, "stream": 7}}]}
    if rank is not None:
        t["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 2}
    with open(path, "w") as f:
        json.dump(t, f)


def check_trial_defects(aiprof, work, mpi_env):
    # D2: two maps into one shared folder, each of a different trace claiming rank 0.
    inputs = os.path.join(work, "d2")
    os.makedirs(inputs)
    for name in ("a.json", "b.json"):
        hand_made_trace(os.path.join(inputs, name), rank=0)
    digests = os.path.join(work, "d2-digests")
    for name in ("a.json", "b.json"):
        run([aiprof, "cluster", "map", os.path.join(inputs, name), "-o", digests, "--host", "h"])
    files = sorted(os.listdir(digests))
    if files != ["rank-0.digest", "rank-0.dup2.digest"]:
        sys.exit("FAIL: D2: the second map of rank 0 did not keep the first digest: %r" % files)
    c = json.loads(run([aiprof, "cluster", "reduce", digests]))
    reasons = [b["reason"] for b in c["broken"]]
    if c["usable"] != 1 or len(reasons) != 1 or "rank 0 again" not in reasons[0] or \
            "rank-0.dup2.digest" not in reasons[0] or "rank-0.digest" not in reasons[0]:
        sys.exit("FAIL: D2: the duplicate rank is not reported naming both digests: %r" % (c["broken"],))
    # D8: every input lacks a rank: map and reduce exit non-zero (the report is still written).
    norank = os.path.join(work, "d8")
    os.makedirs(norank)
    for name in ("nodeA.json", "nodeB.json"):
        hand_made_trace(os.path.join(norank, name))
    d8 = os.path.join(work, "d8-digests")
    rc, _, err = run_rc([aiprof, "cluster", "map", norank, "-o", d8])
    if rc == 0 or "no input gave a usable digest" not in err:
        sys.exit("FAIL: D8: cluster map of rankless inputs: exit %d\n%s" % (rc, err))
    report = os.path.join(work, "d8.json")
    rc, _, err = run_rc([aiprof, "cluster", "reduce", d8, "-o", report])
    if rc == 0 or "is usable" not in err or not os.path.exists(report):
        sys.exit("FAIL: D8: cluster reduce of unusable digests: exit %d\n%s" % (rc, err))
    # D5: process 1 lists another job than process 0, with more units (the
    # old code ignored its extra digest and mixed the jobs with exit 0).
    other = os.path.join(work, "d5-other")
    os.makedirs(other)
    hand_made_trace(os.path.join(other, "rank0.json"), rank=0)
    out = os.path.join(work, "d5-out")
    script = 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then j="$2"; else j="$1"; fi; exec "$0" cluster analyze "$j" -o "$3"'
    rc, so, err = run_rc(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", "sh", "-c", script, aiprof,
                          other, inputs, out], mpi_env)
    if rc == 0 or "do not list the same inputs" not in err or "process 1 (2 units) lists others" not in err:
        sys.exit("FAIL: D5: MPI processes with different inputs: exit %d\n%s%s" % (rc, so, err))
    if os.path.exists(os.path.join(out, "cluster.json")):
        sys.exit("FAIL: D5: a report was written from mixed inputs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--generator", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        check_trial_defects(a.aiprof, work, dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                                                 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_plm_rsh_agent=""))
        level1 = os.path.join(a.fixtures, "ascend-pt", "level1")
        c = same_outputs(a.aiprof, level1, work, "level1")
        m = json.loads(run([a.aiprof, "analyze", level1, "--format", "json", "--only", "communication"]))["metrics"]
        if abs(c["wait_ratio"] - m["comm_wait_ratio"]["value"]) > 1e-12:
            sys.exit("FAIL: wait ratio %r vs analyze %r" % (c["wait_ratio"], m["comm_wait_ratio"]["value"]))
        if abs(c["slowest"]["excess_ratio"] - m["slow_rank_excess_ratio"]["value"]) > 1e-12:
            sys.exit("FAIL: slow rank excess %r vs analyze %r" % (c["slowest"]["excess_ratio"],
                                                                 m["slow_rank_excess_ratio"]["value"]))
        if c["slowest"]["rank"] != 1:
            sys.exit("FAIL: level1 slowest rank %r, expected 1" % c["slowest"]["rank"])
        # Two readings, each named by what it measures: rank 1 arrives last at the
        # collectives, rank 0 has the longest step (trial_views2 N2: both were "slowest").
        with open(os.path.join(work, "level1-single", "cluster.md")) as f:
            md = f.read()
        for want in ("Rank 1 arrives last at collectives", "longest step on rank"):
            if want not in md:
                sys.exit("FAIL: level1 cluster.md lacks %r" % want)
        if "lowest rank" in md:
            sys.exit("FAIL: level1 cluster.md still says 'slowest rank' for one of its two readings")
        job = os.path.join(work, "job8")
        planted = json.loads(run([sys.executable, a.generator, "--fixtures", a.fixtures, "--ranks", "8", "--out", job,
                                  "--slow-rank", "5", "--seed", "3"]).strip().splitlines()[-1])
        with open(os.path.join(job, "rank-8.json"), "w") as f:  # hand-made broken input: truncated JSON
            f.write('{"traceEvents":[{"ph":"X","name":')
        c = same_outputs(a.aiprof, job, work, "job8")
        broken = [b for b in c["broken"] if b["rank"] == 8]
        if not broken or "rank-8.json" not in broken[0]["reason"] or c["usable"] != 8:
            sys.exit("FAIL: job8: the broken input is not listed with its reason: %r" % (c["broken"],))
        if not c["clocks"]["aligned"] or not c["clocks"]["aligned_clocks_agree"]:
            sys.exit("FAIL: job8 clocks not aligned: %r" % c["clocks"])
        s = c["slow_ranks"]
        if not s or s[0]["rank"] != 5 or s[0]["ops"][0]["name"] != planted["planted_op"]:
            sys.exit("FAIL: job8 planted rank/op not found: %r" % (s[:1],))
    print("cluster e2e: ok")


if __name__ == "__main__":
    main()
