#!/usr/bin/env python3
"""`aiprof cluster analyze` of a job in one file: one digest per rank.

A trace that holds several ranks (an `aiprof trace` capture of a
torch.distributed job; here a job folder imported to one file with `aiprof
import JOB -o job.aiprof`, which keeps every rank's tracks on its rank) is
mapped as one digest per rank, as if each rank had come in its own file
(dee191f refused it; before that it was mapped as its first rank, "Missing
ranks: 1"). For the real gloo jobs of test/data (3 ranks, CPU) and, with
--fixtures, the torch_npu job ascend-pt/level1 (2 of 8 ranks):

1. `cluster analyze job.aiprof` gives the cluster.json of `cluster analyze
   JOB` (the rank folder), every figure, the Ranks table and the slow-rank
   verdict included; only each rank's input path and the import
   diagnostics (counted over the whole file, put beside the first rank)
   differ, and their counts add up to the split inputs'.
2. A mix (rank 0's own file and a file of ranks 1 and 2) gives the same.
   With --mpirun: `mpirun -np 2` (process 1 maps the 2-rank file, so its
   part carries two digests for one unit) writes byte-identical reports to
   one process.
3. What is still ambiguous is refused or listed: a rank in two inputs (the
   job file and rank 1's own file) is a duplicate naming both; a job file
   named rank0_... (its name says rank 0) is an error naming its ranks.

With --python (a python3 with torch; ctest's e2e_cluster_rank_capture,
heavy): `aiprof trace` of a real 2-rank DDP job on gloo (capture_ranks_test.py's,
rank 1 sleeping 150 ms a step), then `cluster analyze` of the capture: two
ranks, each one's matched collectives, wait, lateness and transfer those
`aiprof analyze` gives for the capture (its communication section reads the
ranks of one trace); the launcher's tracks, on no rank, are counted beside
rank 0; the attribution tree's other threads name their rank.
"""
import argparse
import filecmp
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(cmd, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def analyze(aiprof, inputs, out, env=None, prefix=()):
    p = run(list(prefix) + [aiprof, "cluster", "analyze"] + inputs + ["-o", out, "--host", "h"], env)
    check(p.returncode == 0, "cluster analyze %s exits 0 (%s)" % (" ".join(os.path.basename(i) for i in inputs),
                                                                   p.stderr.strip()[-300:]))
    try:
        with open(os.path.join(out, "cluster.json")) as f:
            return json.load(f)
    except OSError:
        return {}


def figures(report):
    """cluster.json without what names the inputs or counts the import's diagnostics."""
    r = json.loads(json.dumps(report))
    diagnostics = 0
    for rank in r.get("ranks", []):
        diagnostics += rank.pop("diagnostics", 0)
        for k in ("source", "import_diagnostics"):
            rank.pop(k, None)
    return r, diagnostics


def same_as_split(aiprof, name, split_inputs, one_inputs, work):
    split = analyze(aiprof, split_inputs, os.path.join(work, name + "-split"))
    one = analyze(aiprof, one_inputs, os.path.join(work, name + "-one"))
    (a, da), (b, db) = figures(split), figures(one)
    check(len(b.get("ranks", [])) == len(a.get("ranks", [])) > 1,
          "%s: %d ranks from one file, %d from the rank files" % (name, len(b.get("ranks", [])), len(a.get("ranks", []))))
    diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    check(not diff, "%s: cluster.json figures equal the rank files' (differ: %s)" % (name, diff))
    for ra, rb in zip(a.get("ranks", []), b.get("ranks", [])):
        keys = sorted(k for k in set(ra) | set(rb) if ra.get(k) != rb.get(k))
        if keys:
            check(False, "%s: rank %s differs in %s" % (name, ra.get("rank"), keys))
    check(da == db, "%s: import diagnostics %d over the file, %d over the rank files" % (name, db, da))


def case_capture(aiprof, python, work):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import capture_ranks_test as cr  # its DDP job and launcher
    launch, ddp = os.path.join(work, "launch.py"), os.path.join(work, "ddp.py")
    open(launch, "w").write(cr.LAUNCH)
    open(ddp, "w").write(cr.DDP)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    env = dict(os.environ, TMPDIR=work, RANKS_DIR=os.path.join(work, "ranks"))
    os.makedirs(env["RANKS_DIR"], exist_ok=True)
    out = os.path.join(work, "ddp.aiprof")
    p = run([aiprof, "trace", "-o", out, "--cpu-hz", "99", "--", python, launch, port, "2", ddp], env)
    check(p.returncode == 0, "capture: aiprof trace of a 2-rank DDP job (%s)" % p.stderr.strip()[-300:])
    j = analyze(aiprof, [out], os.path.join(work, "capture"))
    ranks = {r["rank"]: r for r in j.get("ranks", [])}
    check(sorted(ranks) == [0, 1] and j.get("missing_ranks") == [], "capture: ranks 0 and 1, none missing (%s, %s)"
          % (sorted(ranks), j.get("missing_ranks")))
    p = run([aiprof, "analyze", out, "--format", "json"], env)
    table = {}
    try:
        for b in json.loads(p.stdout)["sections"]["communication"]["blocks"]:
            if b.get("key") == "ranks":
                table = {r["rank"]: r for r in b["rows"]}
    except (ValueError, KeyError) as e:
        check(False, "capture: analyze's communication section (%s)" % e)
    # The figures analyze reports: on the aligned clocks when the raw ones
    # disagree and the aligned ones agree (cross_rank.h), else on the raw
    # ones. gloo's all-reduce ends its ranks ~1.5 ms apart, about 25% of the
    # median collective: a loaded machine tips the raw clocks either way.
    clocks = j.get("clocks", {})
    prefix = "aligned_" if clocks.get("aligned") and clocks.get("aligned_clocks_agree") else ""
    for rank, r in sorted(ranks.items()):
        want = table.get(rank, {})
        got = (r["matched"], r[prefix + "wait_ns"], r[prefix + "lateness_ns"], r[prefix + "transfer_ns"])
        check(want and got == (want["matched"], want["wait_ns"], want["lateness_ns"], want["transfer_ns"]) and
              got[0] > 0, "capture: rank %d matched, wait, lateness, transfer %s = analyze's %s" % (
                  rank, got, want and (want["matched"], want["wait_ns"], want["lateness_ns"], want["transfer_ns"])))
    if len(ranks) == 2:
        check(ranks[0]["wait_ns"] > ranks[1]["wait_ns"], "capture: rank 0 waits for rank 1, which sleeps (%d vs %d ns)"
              % (ranks[0]["wait_ns"], ranks[1]["wait_ns"]))
        kinds = [g["kind"] for g in ranks[0].get("import_diagnostics", [])]
        check("rankless_tracks" in kinds, "capture: the launcher's tracks, of no rank, counted beside rank 0 (%s)" % kinds)
    # Every other thread of the attribution tree names its rank, and rank 0's
    # (which waits in gloo's all-reduce for the sleeping rank 1) are there.
    # Rank 1's own communication threads wait little, since it arrives last:
    # whether they reach the tree's 0.5%-of-the-step floor depends on how the
    # machine's load spread the ranks, so they are not required.
    text = run([aiprof, "analyze", out], env).stdout
    labels = re.findall(r"\[other thread [^\]]*\]", text)
    check(labels and all(re.search(r" \(rank [01]\)\]$", l) for l in labels) and
          any(l.endswith("(rank 0)]") for l in labels),
          "capture: analyze's other threads name their rank: %s" % sorted(set(labels))[:6])


def case_files(a, work):
    jobs = [("recorded", os.path.join(a.data, "step_offset_gloo", "recorded")),
            ("a_step_behind", os.path.join(a.data, "step_offset_gloo", "rank1_a_step_behind")),
            ("survivors", os.path.join(a.data, "crash_gloo", "survivors_timed_out")),
            ("late", os.path.join(a.data, "crash_gloo", "late_past_timeout"))]
    if a.fixtures and os.path.isdir(os.path.join(a.fixtures, "ascend-pt", "level1")):
        jobs.append(("level1", os.path.join(a.fixtures, "ascend-pt", "level1")))
    # 1. The job in one file against its rank files.
    for name, job in jobs:
        one = os.path.join(work, name + ".aiprof")
        p = run([a.aiprof, "import", job, "-o", one])
        check(p.returncode == 0, "%s: import the job to one file (%s)" % (name, p.stderr.strip()[-200:]))
        same_as_split(a.aiprof, name, [job], [one], work)

    # 2. A mix of a rank's own file and a file of the other two.
    job = os.path.join(a.data, "step_offset_gloo", "recorded")
    rest = os.path.join(work, "ranks12")
    os.makedirs(rest)
    for r in (1, 2):
        shutil.copy(os.path.join(job, "rank%d.pt.trace.json.gz" % r), rest)
    rest_file = os.path.join(work, "ranks12.aiprof")
    p = run([a.aiprof, "import", rest, "-o", rest_file])
    check(p.returncode == 0, "import ranks 1 and 2 to one file (%s)" % p.stderr.strip()[-200:])
    rank0 = os.path.join(job, "rank0.pt.trace.json.gz")
    same_as_split(a.aiprof, "mix", [job], [rank0, rest_file], work)
    if a.mpirun:
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_plm_rsh_agent="")
        for name, inputs in (("mix", [rank0, rest_file]), ("recorded", [os.path.join(work, "recorded.aiprof")])):
            single, mpi = os.path.join(work, name + "-one"), os.path.join(work, name + "-mpi")
            analyze(a.aiprof, inputs, mpi, env, prefix=(a.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2"))
            for f in ("cluster.json", "cluster.md", "cluster.html"):
                ok = os.path.exists(os.path.join(mpi, f)) and filecmp.cmp(os.path.join(single, f),
                                                                         os.path.join(mpi, f), shallow=False)
                check(ok, "%s: %s of mpirun -np 2 is byte-identical to one process's" % (name, f))

    # 3. Still ambiguous.
    whole = os.path.join(work, "recorded.aiprof")
    twice = analyze(a.aiprof, [whole, os.path.join(job, "rank1.pt.trace.json.gz")], os.path.join(work, "twice"))
    broken = twice.get("broken", [])
    check(len(twice.get("ranks", [])) == 3 and len(broken) == 1 and broken[0].get("rank") == 1 and
          ("rank 1 again (also in %s)" % whole) in broken[0].get("reason", ""),
          "a rank in two inputs is a duplicate naming the job file: %s" % broken)
    named = os.path.join(work, "rank0_job.aiprof")
    shutil.copy(whole, named)
    p = run([a.aiprof, "cluster", "analyze", named, "-o", os.path.join(work, "named")])
    check(p.returncode == 1, "a job file named rank0_... exits 1 (%d)" % p.returncode)
    check("holds ranks 0, 1, 2 in one trace, but its data or its name says rank 0" in p.stderr,
          "and names its ranks: " + p.stderr.strip()[-300:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", help="test/data")
    ap.add_argument("--fixtures", help="shared fixtures (ascend-pt/level1)")
    ap.add_argument("--mpirun", help="mpirun, to check the MPI path")
    ap.add_argument("--python", help="a python3 with torch: the capture case only")
    a = ap.parse_args()
    os.environ["AIPROF_CALIBRATE"] = "0"
    with tempfile.TemporaryDirectory() as work:
        os.environ["XDG_CONFIG_HOME"] = os.path.join(work, "config")
        os.environ["XDG_DATA_HOME"] = os.path.join(work, "data")
        if a.python:
            case_capture(a.aiprof, a.python, work)
        else:
            case_files(a, work)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
