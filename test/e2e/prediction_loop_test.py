#!/usr/bin/env python3
"""The prediction loop closed (issue 23 items 2-3) on the shipped ResNet50
pair: the DataLoader suggestion's gain is simulated; validate shows the
prediction for the fix of the finding that went away against the measured
after run; each card keeps the prediction; later suggestions of that fix are
corrected by the stored errors, and the correction equals the normal
shrinkage model of docs/whatif.md computed here independently from the
stored cases (sqlite3), not from aiprof's output."""
import argparse
import gzip
import json
import statistics
import math
import os
import sqlite3
import subprocess
import sys
import tempfile

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def run(aiprof, *args):
    p = subprocess.run([aiprof, *args], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit("aiprof %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def dataloader_suggestion(aiprof, before, db, out):
    run(aiprof, "suggest", before, "--db", db, "-o", out)
    for f in json.load(open(out))["findings"]:
        for s in f["suggestions"]:
            if s["id"] == "dataloader_workers":
                return s
    raise SystemExit("no dataloader_workers suggestion")


def recompressed(path, out):
    """The same trace in other bytes (gzip level 1): another input to
    InputIdentity, the same workload. A case measured from one corrects the
    other's prediction; never its own trace's (docs/whatif.md, "Never the
    trace being predicted")."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    with open(out, "wb") as f:
        f.write(gzip.compress(data, compresslevel=1, mtime=0))
    check(open(out, "rb").read() != open(path, "rb").read(), "%s: recompressed into other bytes" % os.path.basename(path))
    return out


def raw_step_walls_ms(path):
    """Each ProfilerStep's wall time from the raw JSON: its start to the end of
    its host span or of the last device work (Kernel, Memcpy, Memset) whose
    launch (the Runtime event of the same correlation id) lies inside it."""
    with gzip.open(path, "rt") as f:
        ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev
                   if e["name"].startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation")
    launch = {e["args"]["correlation"]: e["ts"] for e in ev if e.get("cat") == "Runtime" and "correlation" in e["args"]}
    device = [(launch.get(e["args"].get("correlation")), e["ts"] + e["dur"]) for e in ev
              if e.get("cat") in ("Kernel", "Memcpy", "Memset")]
    walls = []
    for start, end in steps:
        last = max([end] + [d for at, d in device if at is not None and start <= at < end])
        walls.append((last - start) / 1e3)
    return walls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    before = os.path.join(a.data, "resnet50_num_workers_0.pt.trace.json.gz")
    after = os.path.join(a.data, "resnet50_num_workers_4.pt.trace.json.gz")
    tmp = tempfile.mkdtemp(prefix="aiprof_loop_")
    db = os.path.join(tmp, "k.db")

    s = dataloader_suggestion(a.aiprof, before, db, os.path.join(tmp, "s0.json"))
    sim = s.get("simulation") or {}
    check(s["expected_gain"]["source"] == "simulation" and sim.get("scenario") == "overlap-data-loading 4",
          "the DataLoader fix's gain is simulated (%r)" % s["expected_gain"])
    raw = sim["predicted_step_ms"]
    check(abs(s["expected_gain"]["max"] - (1 - sim["predicted_interval_ms"][0] / sim["measured_step_ms"])) < 1e-6,
          "gain = 1 - predicted/measured at the interval's end")

    run(a.aiprof, "validate", "--before", before, "--after", after, "--db", db, "-o", os.path.join(tmp, "v.json"))
    p = json.load(open(os.path.join(tmp, "v.json"))).get("prediction") or {}
    check(p.get("fix") == "dataloader_workers" and "gone after" in p.get("matched_by", ""),
          "validate matches the fix by the finding that went away (%r)" % p.get("matched_by"))
    check(abs(p["predicted_ms"] - raw) < 1e-3, "validate shows the suggestion's prediction")
    check(abs(p["error"]) < 0.10, "ResNet50 prediction within 10%% of the measured after run (%+.1f%%)" % (100 * p["error"]))

    # --warmup-steps sets the window of the prediction check too: its measured
    # median is over the after run's steps after the first W (raw JSON).
    walls = raw_step_walls_ms(after)
    for w in (0, 3):
        out = os.path.join(tmp, "v%d.json" % w)
        run(a.aiprof, "validate", "--before", before, "--after", after, "--warmup-steps", str(w), "-o", out)
        pw = json.load(open(out)).get("prediction") or {}
        want = statistics.median(walls[w:])
        check(abs(pw.get("measured_ms", 0) - want) < 1e-3,
              "validate --warmup-steps %d: the prediction's measured median %.4f ms = the raw median of steps %d.. "
              "(%.4f ms)" % (w, pw.get("measured_ms", 0), w + 1, want))

    # The cards are measured from a copy of the before trace in other bytes,
    # so that the original's next suggestion may be corrected by them.
    measured_from = recompressed(before, os.path.join(tmp, "before_copy.json.gz"))
    for _ in range(2):
        run(a.aiprof, "card", "--before", measured_from, "--after", after, "--db", db, "--fix", "num_workers=4",
            "-o", os.path.join(tmp, "card.md"))
    con = sqlite3.connect(db)
    cases = con.execute("SELECT predicted_ns, measured_ns FROM card_predictions WHERE fix_id = 'dataloader_workers' "
                        "AND source = 'simulation'").fetchall()
    check(len(cases) == 2, "both cards keep the prediction (%d)" % len(cases))
    check(all(abs(pr / 1e6 - raw) < 1e-3 for pr, _ in cases), "cards keep the uncorrected simulation")

    # The model of docs/whatif.md, independently: r = ln(measured/predicted);
    # the two cards measured one pair (the same before and after bytes), so
    # they are one case, the newest (the predict trial's D8: each card of a
    # pair counted again); sigma^2 = (4 * 0.15^2 + sum of squares) / (4 + n - 1),
    # 0.15 for one case; tau 0.25.
    r = [math.log(m / pr) for pr, m in cases[-1:]]
    tau = 0.25
    sigma = math.sqrt((4 * 0.15 ** 2 + sum((x - sum(r) / len(r)) ** 2 for x in r)) / (4 + len(r) - 1))
    precision = len(r) / sigma ** 2 + 1 / tau ** 2
    bias = sum(r) / sigma ** 2 / precision
    s2 = dataloader_suggestion(a.aiprof, before, db, os.path.join(tmp, "s2.json"))
    sim2 = s2["simulation"]
    check(sim2["history_cases"] == 1, "the next suggestion is corrected by 1 past case: two cards of one pair are one")
    want = raw * math.exp(bias)
    check(abs(sim2["predicted_step_ms"] - want) / want < 1e-4,
          "corrected prediction %.3f ms = %.3f ms from the stored cases" % (sim2["predicted_step_ms"], want))
    # The trace the cases were measured from is not corrected by them: they
    # are its own outcome (trial sceptic, finding 2: "corrected by 1 past
    # case", that very pair).
    own = dataloader_suggestion(a.aiprof, measured_from, db, os.path.join(tmp, "s_own.json"))
    check(own["simulation"]["history_cases"] == 0 and abs(own["simulation"]["predicted_step_ms"] - raw) < 1e-3 and
          "no past case counted; left out: 2 measured from this very trace"
          in own["simulation"].get("history_from", ""),
          "the trace the cards were measured from keeps its uncorrected prediction %.3f ms (%r)"
          % (own["simulation"]["predicted_step_ms"], own["simulation"].get("history_from")))
    scenario_card_bottleneck(a.aiprof, a.data, tmp)
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


def scenario_card_bottleneck(aiprof, data, tmp):
    """README's `card --scenario "scale checkpoint 0.1"` example (the audit's
    item 5): the card's core bottleneck is what the scenario changes, the
    `checkpoint` region (25.63 -> 2.56 ms a step in the replay), not the op
    that lost the most time between the runs (it said op:aten::mm). The key
    is inert for history: a scenario's cases are found by the scenario's
    text (whatif --db still counts this one) and a card without a fix id
    corrects no suggestion; op:NAME is no rule's bottleneck, so suggest's
    cards of the finding's bottleneck (host_region here) do not take it."""
    pairs = os.path.join(data, "pairs")
    before = os.path.join(pairs, "checkpoint_every_step_before.pt.trace.json.gz")
    after = os.path.join(pairs, "checkpoint_every_step_after.pt.trace.json.gz")
    db = os.path.join(tmp, "scenario.db")
    card = run(aiprof, "card", "--before", recompressed(before, os.path.join(tmp, "checkpoint_copy.json.gz")),
               "--after", after, "--scenario", "scale checkpoint 0.1",
               "--statistic", "mean", "--db", db).replace("**", "")
    check("Core bottleneck: op:checkpoint" in card and "op:aten::mm" not in card,
          "card --scenario: the core bottleneck is the scenario's target, op:checkpoint")
    check("what the scenario changes most: checkpoint" in card, "card --scenario: says where the bottleneck is from")
    con = sqlite3.connect(db)
    stored = con.execute("SELECT bottleneck FROM cards").fetchall()
    check(stored == [("op:checkpoint",)], "card --scenario: stored under op:checkpoint (%r)" % stored)
    w = json.loads(run(aiprof, "whatif", before, "--scenario", "scale checkpoint 0.1", "--db", db,
                       "--format", "json"))["scenarios"][0]
    check(w["mean"]["history"]["cases"] == 1, "whatif --db: the scenario's case still corrects its mean")
    out = os.path.join(tmp, "s_scenario.json")
    run(aiprof, "suggest", before, "--db", db, "-o", out)
    took = [s["id"] for f in json.load(open(out))["findings"] for s in f["suggestions"]
            if (s.get("expected_gain") or {}).get("source") == "knowledge card" or s.get("history") or
            (s.get("simulation") or {}).get("history_cases")]
    check(not took, "suggest: no suggestion takes the scenario card as its history (%r)" % took)
    # With --bottleneck the card keeps what it is given.
    card = run(aiprof, "card", "--before", before, "--after", after, "--scenario", "scale checkpoint 0.1",
               "--statistic", "mean", "--bottleneck", "host_region", "--db", os.path.join(tmp, "given.db")).replace("**", "").replace("\\", "")
    check("Core bottleneck: host_region" in card and "what the scenario changes most" not in card,
          "card --scenario --bottleneck: the given bottleneck")


if __name__ == "__main__":
    sys.exit(main())
