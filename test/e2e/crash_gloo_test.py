#!/usr/bin/python3
"""A crashed rank's peers wait in the collective; that is no transfer.

On the real crash recordings of test/data/crash_gloo (gen_crash.py: rank 2 of
3 stopped before step 4's all-reduce; ranks 0 and 1 sat in gloo:all_reduce
until the 4 s timeout), runs `aiprof analyze --format json` and `aiprof
cluster analyze --world-size 3` as a user does and checks against this
script's own reading of the raw files:
  survivors_timed_out/  the collective each present rank entered last is
                        stalled: each rank's time in it (its raw duration)
                        is its wait for a missing rank, named rank 2 in the
                        cluster report and in `aiprof report`'s
                        communication table; no rank's transfer holds it.
  late_past_timeout/    rank 2 arrived after the others had left: the
                        collective is incomplete and rank 2 named late.
On both, `aiprof suggest` leads with the failure (rules/rank_failure.yaml),
its impact the present ranks' time in the failed collective per steady step,
and `aiprof report`'s headline names it.
Usage: crash_gloo_test.py AIPROF DATA_DIR (test/data)
"""
import gzip, json, os, subprocess, sys, tempfile

bad = 0


def check(name, got, want):
    global bad
    ok = got == want
    bad += not ok
    print(f"{'ok' if ok else 'FAIL'} {name}: aiprof {got!r}, expected {want!r}")


def raw_collectives(folder):
    """Per rank: [(ts_ns, dur_ns)] of its gloo:all_reduce spans, by start."""
    out = {}
    for f in sorted(os.listdir(folder)):
        rank = int(f.split(".")[0].removeprefix("rank"))
        with gzip.open(os.path.join(folder, f), "rt") as h:
            events = json.load(h)
        out[rank] = sorted((round(e["ts"] * 1000), round(e["dur"] * 1000)) for e in events
                           if e.get("name") == "gloo:all_reduce")
    return out


def raw_steps(folder, rank):
    """Rank's ProfilerStep#N spans: {N: (start_ns, end_ns)}."""
    with gzip.open(os.path.join(folder, f"rank{rank}.pt.trace.json.gz"), "rt") as h:
        events = json.load(h)
    return {int(e["name"].split("#")[1]): (round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000))
            for e in events if e.get("name", "").startswith("ProfilerStep#")}


def suggest(aiprof, folder, env):
    return json.loads(subprocess.run([aiprof, "suggest", "--format", "json", folder], check=True,
                                     capture_output=True, text=True, env=env).stdout)


def analyze(aiprof, folder, env):
    got = json.loads(subprocess.run([aiprof, "analyze", "--only", "communication", "--format", "json", folder],
                                    check=True, capture_output=True, text=True, env=env).stdout)
    return {b.get("key"): b for b in got["sections"]["communication"]["blocks"] if b.get("key")}


def cluster(aiprof, folder, env, out):
    subprocess.run([aiprof, "cluster", "analyze", folder, "--world-size", "3", "-o", out], check=True,
                   capture_output=True, text=True, env=env)
    with open(os.path.join(out, "cluster.json")) as h:
        j = json.load(h)
    with open(os.path.join(out, "cluster.md")) as h:
        return j, h.read()


def main():
    aiprof, data = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="crash_gloo_")
    env = dict(os.environ, AIPROF_CALIBRATE="0", XDG_CONFIG_HOME=tmp, XDG_DATA_HOME=tmp)

    folder = os.path.join(data, "crash_gloo", "survivors_timed_out")
    raw = raw_collectives(folder)
    waited = {r: v[-1][1] for r, v in raw.items()}  # the last all-reduce each entered
    blocks = analyze(aiprof, folder, env)
    failed = blocks.get("failed_collectives", {}).get("rows", [])
    check("analyze: failed collectives", len(failed), 1)
    if failed:
        check("analyze: its step", failed[0]["step"], 4)
        check("analyze: waited (longest)", failed[0]["waited_ns"], max(waited.values()))
        check("analyze: named a wait for a missing rank", "for a rank not in the inputs" in failed[0]["what"], True)
    stalled = {row["rank"]: row["stalled_ns"] for row in blocks.get("stalled_waits", {}).get("rows", [])}
    check("analyze: each rank's wait for the missing rank", stalled, waited)
    for row in blocks["ranks"]["rows"]:
        check(f"analyze: rank {row['rank']} transfer below the timeout", row["transfer_ns"] < 1_000_000_000, True)
    j, md = cluster(aiprof, folder, env, os.path.join(tmp, "killed"))
    check("cluster: stalled", j["clocks"].get("stalled"), 1)
    check("cluster: missing ranks", j["missing_ranks"], [2])
    check("cluster: stalled waits", {r["rank"]: r.get("stalled_wait_ns") for r in j["ranks"]}, waited)
    for r in j["ranks"]:
        check(f"cluster: rank {r['rank']} transfer below the timeout", r["aligned_transfer_ns"] < 1_000_000_000, True)
    # Markdown escapes the parentheses.
    check("cluster report names rank 2", "for a rank not in the inputs \\(missing: rank 2\\)" in md, True)

    report = os.path.join(tmp, "report.md")
    subprocess.run([aiprof, "report", folder, "-o", report], check=True, capture_output=True, text=True, env=env)
    with open(report) as h:
        lines = h.read().splitlines()
    header = [i for i, line in enumerate(lines) if "Wait for a missing rank \\(stalled\\)" in line]
    check("report: stalled column", len(header), 1)
    rows = lines[header[0] + 2:header[0] + 2 + len(waited)] if header else []
    cells = lambda line: [c.strip() for c in line.strip().strip("|").split("|")]
    names = cells(lines[header[0]]) if header else []
    col = lambda name: [cells(line)[names.index(name)] for line in rows] if name in names else None
    check("report: stalled per rank", col("Wait for a missing rank \\(stalled\\)"),
          [f"{waited[r] / 1e9:.2f} s" for r in sorted(waited)])
    # The clocks were aligned (legacy traces count from each rank's profiler
    # start): the report says each rank's shift, as analyze does.
    shifts = {row["rank"]: row.get("clock_shift_ns") for row in blocks["ranks"]["rows"]}
    check("report: each rank's clock shift, as analyze's", col("Clock moved by"),
          [f"{shifts[r] / 1e6:.2f} ms".replace("-", "\\-") for r in sorted(waited)])
    check("report: says the figures are on aligned clocks",
          "Wait and transfer on clocks aligned by the collectives' ends" in "\n".join(lines), True)

    # The diagnosis leads with the failure (rules/rank_failure.yaml), its
    # impact the present ranks' time in the failed collective per steady
    # step: each stalled all-reduce lies inside that rank's ProfilerStep#4,
    # a steady step, so all of it counts; the environment's fixes for the
    # slow step are excluded, naming the failure.
    s = suggest(aiprof, folder, env)
    check("suggest: first finding", s["findings"][0]["rule"] if s["findings"] else None, "failed_collective")
    steps = s["metrics"]["impact_steps"]["value"]
    for r, (ts, dur) in ((r, v[-1]) for r, v in raw.items()):
        lo, hi = raw_steps(folder, r)[4]
        check(f"rank {r}'s stalled all-reduce inside its step 4", lo <= ts and ts + dur <= hi, True)
    if s["findings"]:
        check("suggest: failed wait per step, ms", round(s["findings"][0]["impact"]["time_ms"], 6),
              round(sum(waited.values()) / steps / 1e6, 6))
    check("suggest: environment fixes excluded", sorted(e["id"] for e in s["excluded_suggestions"]
                                                      if e["rule"] == "unstable_steps"),
          ["isolate_environment", "pin_allocator"])
    with open(report) as h:
        text = h.read()
    check("report: headline's top bottleneck is the failure",
          "**Top bottleneck:** A rank failed in a collective; the others waited for it" in text, True)
    check("report: its best fix gains nothing by itself", "Find why the rank stopped — expected gain none by itself"
          in text, True)

    folder = os.path.join(data, "crash_gloo", "late_past_timeout")
    raw = raw_collectives(folder)
    blocks = analyze(aiprof, folder, env)
    failed = blocks.get("failed_collectives", {}).get("rows", [])
    check("late: failed collectives", len(failed), 1)
    if failed:
        check("late: named", failed[0]["what"].startswith("rank 2 arrived after another rank had left it"), True)
        check("late: waited", failed[0]["waited_ns"], max(raw[0][-1][1], raw[1][-1][1]))
    # The late rank's own wait is not counted: it arrived after the others
    # left; theirs are.
    s = suggest(aiprof, folder, env)
    check("late: first finding", s["findings"][0]["rule"] if s["findings"] else None, "failed_collective")
    if s["findings"]:
        check("late: failed wait per step, ms", round(s["findings"][0]["impact"]["time_ms"], 6),
              round((raw[0][-1][1] + raw[1][-1][1]) / s["metrics"]["impact_steps"]["value"] / 1e6, 6))
    j, md = cluster(aiprof, folder, env, os.path.join(tmp, "late"))
    late = [c for c in j["collectives"] if c.get("state") != "complete"]
    check("late: cluster instances not complete", [(c.get("state"), c.get("late_after_end")) for c in late],
          [("incomplete", [2])])
    sys.exit(1 if bad else 0)


main()
