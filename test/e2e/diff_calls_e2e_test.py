#!/usr/bin/env python3
"""aiprof diff's calls rule (docs/diff.md, "Fewer or more calls"), checked
against figures computed here from the raw JSON (no aiprof code):

  * HTA's trace_compare pair (../shared/fixtures/kineto): nccl:all_reduce
    runs in both steps of A and in one step of B, 66 and 67 µs: 1 -> 0.5
    calls per step, each call as long. It is "calls_removed" (it read
    "faster -50%"), the calls account for (0.5 - 1) x A's time per call,
    the time per call is unchanged; the kernel under cudaLaunchKernel
    likewise.
  * The hand-made pair test/data/diff/calls_{a,b}.json
    (test/data/diff/gen_calls_pair.py; six steps): aten::mm 2 -> 1 calls of
    ~300 µs: calls_removed, per call unchanged; aten::relu 4 x 50 -> 2 x 60
    µs: calls_removed (-100 µs from the calls, +20 from the time per call),
    per call slower; aten::copy_ 2 x 100 -> 3 x 200 µs: slower, per call
    slower; aten::add 1 x 100 -> 1 x 150: slower, no per-call verdict;
    aten::sum unchanged. Each entry's calls and time per step, Δ from calls
    and times per call equal the raw spans; the per-call Welch p equals the
    textbook Welch test on the per-step times per call (each step's total
    over its calls); the headline's evidence and detail say the same.
  * Every format (text, md, html, csv, yaml) shows the kind and the calls
    columns.

  diff_calls_e2e_test.py --aiprof BIN --data test/data --fixtures ../shared/fixtures
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diff_e2e_test import kv, load_events, steady_steps, table, welch_p  # noqa: E402

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(aiprof, a, b, fmt, *extra):
    p = subprocess.run([aiprof, "diff", a, b, "--format", fmt, "--top", "0", *extra], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"aiprof diff {a} {b} --format {fmt} failed ({p.returncode}): {p.stderr}")
    return p.stdout


def raw_calls(events, steps, name, tid_of_step=True):
    """Per steady step: (calls, total µs) of X events named `name` that start inside the step
    (any thread when tid_of_step is False)."""
    out = []
    for ts, dur, tid in steps:
        spans = [e["dur"] for e in events
                 if e.get("ph") == "X" and e.get("name") == name and ts <= e["ts"] < ts + dur
                 and (not tid_of_step or e.get("tid") == tid)]
        out.append((len(spans), float(sum(spans))))
    return out


def figures(per_step):
    """calls per step, µs per step, µs per call."""
    n = len(per_step)
    calls = sum(c for c, _ in per_step)
    total = sum(t for _, t in per_step)
    return calls / n, total / n, (total / calls if calls else 0.0)


def near(x, y, tol=1.0):
    return x is not None and abs(x - y) <= tol


def row_of(rows, leaf):
    hits = [r for r in rows if r["path"].split(" / ")[-1] == leaf]
    return hits[0] if len(hits) == 1 else None


def check_entry(label, r, ea, eb, sa, sb, name, change, per_call, tid_of_step=True):
    ca, ta, pa = figures(raw_calls(ea, sa, name, tid_of_step))
    cb, tb, pb = figures(raw_calls(eb, sb, name, tid_of_step))
    calls_delta_us = (cb - ca) * pa
    check(r is not None and r["change"] == change and r.get("per_call") == per_call,
          f"{label}: {name} is {change}, per call {per_call or '(no verdict)'}; "
          f"got {r and (r['change'], r.get('per_call'))}")
    if r is None:
        return
    check(r["a_calls"] == ca and r["b_calls"] == cb, f"{label}: {name} calls {ca} -> {cb} per step (raw); got "
          f"{r['a_calls']} -> {r['b_calls']}")
    check(near(r["a_ns"], ta * 1000) and near(r["b_ns"], tb * 1000),
          f"{label}: {name} {ta} -> {tb} µs per step (raw); got {r['a_ns']} -> {r['b_ns']} ns")
    check(near(r.get("calls_delta_ns"), calls_delta_us * 1000),
          f"{label}: {name} Δ from calls = ({cb} - {ca}) x {pa} µs = {calls_delta_us} µs (raw); "
          f"got {r.get('calls_delta_ns')} ns")
    check(near(r.get("a_per_call_ns"), pa * 1000) and near(r.get("b_per_call_ns"), pb * 1000),
          f"{label}: {name} {pa} -> {pb} µs per call (raw); got {r.get('a_per_call_ns')} -> {r.get('b_per_call_ns')} ns")


def hta(a, fixtures):
    k = os.path.join(fixtures, "kineto")
    fa = os.path.join(k, "HolisticTraceAnalysis__tests__data__trace_compare__base__base.json.gz")
    fb = os.path.join(k, "HolisticTraceAnalysis__tests__data__trace_compare__test__test.json.gz")
    doc = json.loads(run(a.aiprof, fa, fb, "json"))
    v = kv(doc, "diff")
    ea, eb = load_events(fa), load_events(fb)
    sa, sb = steady_steps(ea, v["steps_a"]), steady_steps(eb, v["steps_b"])
    rows = table(doc, "changes", "changes")
    # The annotation runs on the communication thread, not the step's: any thread.
    r = row_of(rows, "nccl:all_reduce")
    check_entry("hta", r, ea, eb, sa, sb, "nccl:all_reduce", "calls_removed", "unchanged", tid_of_step=False)
    check(r is not None and r["a_calls"] == 1 and r["b_calls"] == 0.5,
          "hta: nccl:all_reduce 1 -> 0.5 calls per step (both steps of A, one of B)")
    check(not any(x["change"] in ("faster", "slower") for x in rows),
          "hta: no entry of the pair is faster or slower (every change is a call added, removed, or a node added)")


def handmade(a):
    fa = os.path.join(a.data, "diff", "calls_a.json")
    fb = os.path.join(a.data, "diff", "calls_b.json")
    doc = json.loads(run(a.aiprof, fa, fb, "json"))
    v = kv(doc, "diff")
    ea, eb = load_events(fa), load_events(fb)
    sa, sb = steady_steps(ea, v["steps_a"]), steady_steps(eb, v["steps_b"])
    check(v["steps_a"] == 6 and v["steps_b"] == 6, f"handmade: 6 steady steps each; got {v['steps_a']}, {v['steps_b']}")
    rows = table(doc, "changes", "changes")
    want = {"aten::mm": ("calls_removed", "unchanged"), "aten::relu": ("calls_removed", "slower"),
            "aten::copy_": ("slower", "slower"), "aten::add": ("slower", "")}
    for name, (change, per_call) in want.items():
        check_entry("handmade", row_of(rows, name), ea, eb, sa, sb, name, change, per_call)
    check(row_of(rows, "aten::sum") is None, "handmade: aten::sum (40 µs, one call, in both) is not a change")
    # Per-call statistics: the per-step time per call (each step's total over
    # its calls; the calls per step are the same in every step of a run here).
    for name in ("aten::mm", "aten::relu", "aten::copy_"):
        r = row_of(rows, name)
        xa = [t / c for c, t in raw_calls(ea, sa, name)]
        xb = [t / c for c, t in raw_calls(eb, sb, name)]
        p = welch_p(xa, xb)
        ok = r is not None and r.get("per_call_test") == "welch" and r.get("per_call_p_value") is not None and (
            abs(r.get("per_call_p_value") - p) <= 1e-6 * max(p, 1e-300) or abs(r.get("per_call_p_value") - p) < 1e-12)
        check(ok, f"handmade: {name} per-call Welch p = {p:.6g} (raw per-step times per call); "
              f"got {r and (r.get('per_call_test'), r.get('per_call_p_value'))}")
        mean_a, mean_b = sum(xa) / len(xa), sum(xb) / len(xb)
        check(r is not None and r.get("per_call_ci_low_ns") is not None
              and r.get("per_call_ci_low_ns") <= (mean_b - mean_a) * 1000 <= r.get("per_call_ci_high_ns"),
              f"handmade: {name} the per-call interval holds the raw change of the mean per call "
              f"({mean_b - mean_a:.3f} µs); got {r and (r.get('per_call_ci_low_ns'), r.get('per_call_ci_high_ns'))}")
    r = row_of(rows, "aten::add")
    check(r is not None and r.get("per_call_test") == "none" and r.get("calls_delta_ns") == 0,
          "handmade: aten::add (one call in both) has no per-call test and 0 from calls")
    # The headline: the largest change (copy_, +400 µs per step) with its calls.
    f = next(b for b in doc["sections"]["diff"]["blocks"] if b.get("key") == "largest_change")
    ev = {k: x.get("value") for k, x in f["evidence"].items()}
    ca, ta, pa = figures(raw_calls(ea, sa, "aten::copy_"))
    cb, tb, pb = figures(raw_calls(eb, sb, "aten::copy_"))
    check("aten::copy_" in f["title"] and "(slower)" in f["title"] and ev.get("per_call") == "slower"
          and near(ev.get("calls_delta_ns"), (cb - ca) * pa * 1000) and ev.get("a_calls") == ca
          and ev.get("b_calls") == cb and "calls per step" in f.get("detail", ""),
          f"handmade: the headline is aten::copy_, slower, {ca} -> {cb} calls, {(cb - ca) * pa} µs from the calls; "
          f"got {f['title']!r} {ev}")
    note = next(b for b in doc["sections"]["changes"]["blocks"] if b.get("key") == "changes").get("note", "")
    check("2 entries changed by their calls per step" in note, f"handmade: the table note counts 2 calls entries: {note!r}")
    # Every format, from the one document.
    for fmt, needles in (("text", ["calls_removed", "Δ from calls", "Per call A", "-300.0 µs"]),
                         ("md", ["calls\\_removed", "Δ from calls", "Per-call test"]),
                         ("html", ["calls_removed", "from calls", "Per-call p"]),
                         ("csv", ["calls_removed", "calls_delta_ns", "a_per_call_ns", "per_call_p_value"]),
                         ("yaml", ["calls_removed", "calls_delta_ns", "per_call_ci_high_ns"])):
        out = run(a.aiprof, fa, fb, fmt)
        missing = [n for n in needles if n not in out]
        check(not missing, f"handmade: --format {fmt} shows {needles}; missing {missing}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    handmade(a)
    if os.path.isdir(os.path.join(a.fixtures, "kineto")):
        hta(a, a.fixtures)
    else:
        print("skip hta: no " + os.path.join(a.fixtures, "kineto"))
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
