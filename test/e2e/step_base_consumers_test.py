#!/usr/bin/env python3
"""The consumers of the step time's base (src/analysis/common/steps.h) on
traces where the device runs behind the host: the report, analyze's steps
section, whatif's per-step table and critical path, and the replayed removal
diagnose states beside a finding's bound.

The expected figures come from the raw Chrome JSON, recomputed by
step_base_test.py's `expected` (its own ProfilerStep spans, correlation join
and periods; no aiprof code). Checked:

  report (JSON: the one document every format renders): the headline names
  the device period, the number of periods and of steps, and the host's mean
  span beside it; the Step times table's Time is each step's period (none
  for the first step) with its host span in a column, the median over the
  periods.
  analyze --format json, steps section: base "device period", host mean,
  period count and mean.
  whatif --format json: every steady step's measured figure is its period, the
  first step has none (null, not its wall time); the critical path's figures
  state their base.
  diagnose (MI300): a replayed removal ("replayed without it x...") is given,
  on the step period, measured the median period.
The traces: TraceLens's MI300 ResNet and HTA's ns_resolution_trace (both
device-behind, step_base_test.py).

  step_base_consumers_test.py --aiprof build/aiprof --fixtures ../shared/fixtures
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from step_base_test import expected, load, ns  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(aiprof, *args, parse=True):
    env = dict(os.environ, AIPROF_CALIBRATE="0", XDG_CONFIG_HOME=tempfile.mkdtemp(), XDG_DATA_HOME=tempfile.mkdtemp())
    out = subprocess.run([aiprof, *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit("aiprof " + " ".join(args) + " failed: " + out.stderr)
    return json.loads(out.stdout) if parse else out.stdout


def ms_text(v):
    return f"{v / 1e6:.2f} ms"


def step_starts(path):
    """The ProfilerStep#N spans' starts (ns), as step_base_test.py reads them."""
    return sorted(ns(e["ts"]) for e in load(path) if e.get("ph") == "X"
                  and e.get("cat") in ("user_annotation", "Operator", "cpu_op")
                  and e["name"].startswith("ProfilerStep#"))


def steps_chart_table(report):
    for b in report["sections"]["charts"]["sections"]["steps"]["blocks"]:
        if b.get("type") == "chart" and b.get("key") == "steps":
            return b["data"], [x["text"] for x in report["sections"]["charts"]["sections"]["steps"]["blocks"]
                               if x.get("type") == "text"]
    return None, []


def check_report(aiprof, rel, path, e):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        run(aiprof, "report", path, "-o", out, parse=False)
        with open(out) as f:
            rep = json.load(f)
    card = rep["sections"]["headline"]["blocks"][0]["values"]["step_time"]
    detail = card["detail"]
    n_periods, n_steps = len(e["periods"]), len(e["host"])
    check(card["value"].startswith(ms_text(e["period_mean"])), f"{rel}: headline step {card['value']} is the mean "
          f"period {ms_text(e['period_mean'])}")
    want = f"over {n_periods} device periods (end of one step's device work to the next's) of {n_steps} steady-state"
    check(want in detail, f"{rel}: headline names the base: {detail!r}")
    check(f"whose steps take {ms_text(e['host_mean'])} (host span)" in detail,
          f"{rel}: headline gives the host's {ms_text(e['host_mean'])} beside it")
    table, texts = steps_chart_table(rep)
    check(table is not None and "host_span" in table["units"], f"{rel}: Step times table has a host span column")
    if table is None:
        return
    rows = table["rows"]
    check(len(rows) == n_steps, f"{rel}: {len(rows)} step rows vs {n_steps}")
    got_periods = [r["time"] for r in rows[1:]]
    check(rows[0]["time"] is None, f"{rel}: the first step has no period in the table ({rows[0]['time']})")
    check(all(abs(g * 1e6 - w) < 1 for g, w in zip(got_periods, e["periods"])),
          f"{rel}: table times {got_periods} ms are the periods {[p / 1e6 for p in e['periods']]} ms")
    check(all(r.get("host_span") is not None and abs(r["host_span"] * 1e6 - h) < 1 for r, h in zip(rows, e["host"])),
          f"{rel}: host span column {[r.get('host_span') for r in rows]} is the host spans")
    ps = sorted(e["periods"])
    median = ps[len(ps) // 2] if len(ps) % 2 else (ps[len(ps) // 2 - 1] + ps[len(ps) // 2]) / 2
    check(any(t.startswith(f"Median {ms_text(median)} over the device periods") for t in texts),
          f"{rel}: chart median is the periods' {ms_text(median)}: {texts}")


def check_analyze(aiprof, rel, path, e):
    doc = run(aiprof, "analyze", path, "--format", "json")
    blocks = doc["sections"]["steps"]["blocks"]
    vals = {}
    for b in blocks:
        if b.get("type") == "values":
            vals.update({k: v["value"] for k, v in b["values"].items()})
    check(vals.get("base") == "device period", f"{rel}: steps section base {vals.get('base')!r}")
    check(vals.get("host_steps") == len(e["host"]), f"{rel}: steps section host spans {vals.get('host_steps')}")
    check(vals.get("host_mean_ns") is not None and abs(vals["host_mean_ns"] - e["host_mean"]) <= 2,
          f"{rel}: steps section host mean {vals.get('host_mean_ns')} vs {e['host_mean']}")
    check(vals.get("periods") == len(e["periods"]), f"{rel}: steps section periods {vals.get('periods')}")
    check(vals.get("period_mean_ns") is not None and abs(vals["period_mean_ns"] - e["period_mean"]) <= 2,
          f"{rel}: steps section period mean {vals.get('period_mean_ns')} vs {e['period_mean']}")


def check_whatif(aiprof, rel, path, e):
    w = run(aiprof, "whatif", path, "--scenario", "remove-comm", "--format", "json")
    sc = w["scenarios"][0]
    check(sc["time_base"].startswith("step period"), f"{rel}: whatif time base {sc['time_base']!r}")
    steps = sc["steps"]
    first = steps[0]
    check(first["measured_ns"] is None and first["predicted_ns"] is None and first.get("no_period") is True,
          f"{rel}: whatif's first step has no period ({first})")
    got = [s["measured_ns"] for s in steps[1:]]
    check(len(got) == len(e["periods"]) and all(abs(g - p) <= 2 for g, p in zip(got, e["periods"])),
          f"{rel}: whatif per-step measured {got} are the periods {e['periods']}")
    # A predicted period is not below the host's step spacing (the host still
    # issues one step per span; the replay only drains the queue the trace
    # began with): remove-comm leaves the host's steps as they were.
    # Nor above the measured period (a measured period may lie below its
    # spacing: HTA ns_resolution's third, by 64 us).
    spacing = [e["starts"][k] - e["starts"][k - 1] for k in range(1, len(e["starts"]))]
    floor = [min(w, m) for w, m in zip(spacing, e["periods"])]
    pred = [s["predicted_ns"] for s in steps[1:]]
    check(len(pred) == len(floor) and all(p is not None and p >= f - 2 for p, f in zip(pred, floor)),
          f"{rel}: whatif's predicted periods {pred} are not below min(host step spacing, measured period) {floor}")
    cp = sc["critical_path"]["time_base"]
    check("wall time" in cp and "not on the step period" in cp, f"{rel}: critical path states its base: {cp!r}")


def check_diagnose(aiprof, rel, path, e):
    text = run(aiprof, "diagnose", path, parse=False)
    lines = [l for l in text.splitlines() if "replayed without it x" in l]
    check(bool(lines), f"{rel}: diagnose gives a replayed removal")
    ps = sorted(e["periods"])
    median = ps[len(ps) // 2] if len(ps) % 2 else (ps[len(ps) // 2 - 1] + ps[len(ps) // 2]) / 2
    for l in lines:
        m = re.search(r"step period, end of the previous step's device work to the end of its own, (median|mean) of "
                      r"(\d+) steady steps?: ([0-9.]+) ms ->", l)
        check(m is not None, f"{rel}: the replay states the step period: {l.strip()[:200]!r}")
        if m:
            check(int(m.group(2)) == len(e["periods"]) and abs(float(m.group(3)) * 1e6 - median) < 0.01e6,
                  f"{rel}: replay measured {m.group(3)} ms over {m.group(2)} periods vs {median / 1e6:.3f} ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    # (trace, whether diagnose has a per-step finding with a removal to replay)
    for rel, replayed in (("tracelens/mi300__resnet_act_checkpoint.json.gz", True),
                          ("kineto/HolisticTraceAnalysis__tests__data__ns_resolution_trace__rank-0."
                           "Apr_03_18_51_38.1102.pt.trace.json.gz", False)):
        path = os.path.join(a.fixtures, rel)
        if not os.path.exists(path):
            print("skip " + rel + " (not found)")
            continue
        e = expected(path)
        e["starts"] = step_starts(path)
        check(e["behind"], f"{rel}: the script's own reading: the device runs behind")
        check_report(a.aiprof, rel, path, e)
        check_analyze(a.aiprof, rel, path, e)
        check_whatif(a.aiprof, rel, path, e)
        if replayed:
            check_diagnose(a.aiprof, rel, path, e)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
