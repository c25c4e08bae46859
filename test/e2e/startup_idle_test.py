#!/usr/bin/env python3
"""Start-up idle (src/analysis/gaps/startup_idle.h, GapCause::kStartup),
checked on two real traces against the raw files.

  - TraceLens's vLLM graph capture trace: 421 of its 431 launch calls lie
    inside hipStreamBeginCapture .. hipStreamEndCapture (recorded into a
    graph, not run), and the device idles through the capture. Before, that
    idle was host_bound: the breakdown bar and the timeline coloured the
    capture as launch overhead.
  - HTA's mi250_minitoy: one hipLaunchKernel of 6.54 ms (its name's median a
    few us: the first launch of its kernel, loading its code object) inside
    the trace's one steady step. Before, the 6.63 ms gap it leaves was
    host_bound, and diagnose's host_bound finding read x10.43 where the rest
    of the step's host-bound idle gives x1.23.

This script reads the raw JSON itself (no aiprof code): the device activities
(kernel, gpu_memcpy, gpu_memset) merged into busy intervals and the gaps
between them; the host's start-up work: each thread's capture windows (a
*StreamBeginCapture call's end to its *StreamEndCapture's start) and the
start-up calls (runtime calls of at least 1 ms and 20 x their name's median,
the device busy for less than half of the call); a gap is start-up idle when
that work covers at least half of it. It checks aiprof's analyze (the
idle_by_cause table, the largest gaps, idle_startup_ns over the steady step),
diagnose (the start-up gap is evidence of start-up, not of host_bound) and the
timeline view (the gap's cause and its legend) against it.

  startup_idle_test.py --aiprof build/aiprof --fixtures ../shared/fixtures
"""
import argparse
import decimal
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

CAPTURE = "tracelens/inference__vllm_decode_full__capture_traces__graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"
MI250 = "kineto/HolisticTraceAnalysis__tests__data__amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz"
DEVICE = ("kernel", "gpu_memcpy", "gpu_memset")
CALLS = ("cuda_runtime", "cuda_driver")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def ns(v):
    return int((decimal.Decimal(str(v)) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def merge(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def covered(merged, a, b):
    return sum(max(0, min(b, y) - max(a, x)) for x, y in merged)


def oracle(path):
    """Gaps of the (single) device timeline, each with the start-up work covering it."""
    with gzip.open(path, "rt") as f:
        ev = [e for e in json.load(f, parse_float=decimal.Decimal)["traceEvents"] if e.get("ph") == "X"]
    busy = merge([[ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])] for e in ev if e.get("cat") in DEVICE])
    gaps = [(busy[k][1], busy[k + 1][0]) for k in range(len(busy) - 1)]
    calls = sorted((e for e in ev if e.get("cat") in CALLS), key=lambda e: (e["tid"], ns(e["ts"])))
    windows, open_since = [], {}
    for e in calls:
        if "StreamBeginCapture" in e["name"]:
            open_since[e["tid"]] = ns(e["ts"]) + ns(e["dur"])
        elif "StreamEndCapture" in e["name"] and e["tid"] in open_since:
            windows.append([open_since.pop(e["tid"]), ns(e["ts"])])
    by_name = {}
    for e in calls:
        by_name.setdefault(e["name"], []).append(ns(e["dur"]))
    startup_calls = []
    for e in calls:
        a, d = ns(e["ts"]), ns(e["dur"])
        if d >= 1_000_000 and d >= 20 * statistics.median(by_name[e["name"]]) and 2 * covered(busy, a, a + d) < d:
            startup_calls.append((e["name"], a, d))
    work = merge(windows + [[a, a + d] for _, a, d in startup_calls])
    startup_gaps = [(a, b, covered(work, a, b)) for a, b in gaps if 2 * covered(work, a, b) >= b - a]
    steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev
                   if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    return {"gaps": gaps, "windows": windows, "calls": startup_calls, "startup_gaps": startup_gaps, "steps": steps}


def run(aiprof, *args, parse=True):
    env = dict(os.environ, AIPROF_CALIBRATE="0", XDG_CONFIG_HOME=tempfile.mkdtemp(), XDG_DATA_HOME=tempfile.mkdtemp())
    out = subprocess.run([aiprof, *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit("aiprof " + " ".join(args) + " failed: " + out.stderr)
    return json.loads(out.stdout) if parse else out.stdout


def table(analysis, section, key):
    for block in analysis["sections"][section]["blocks"]:
        if block.get("key") == key:
            return block
    return {"rows": []}


def causes_row(analysis):
    rows = table(analysis, "breakdown", "idle_by_cause")["rows"]
    return rows[0] if rows else {}


def largest_gaps(analysis):
    return [i.get("text", i) if isinstance(i, dict) else i for i in table(analysis, "breakdown", "largest_gaps").get("items", [])]


def ms(v):
    return "%.3f ms" % (v / 1e6)


def gap_text(len_ns):
    """How a gap line names its length (FormatDurationNs: 2 decimals)."""
    return "gap of %.2f ms" % (len_ns / 1e6)


def timeline_data(aiprof, path):
    out = os.path.join(tempfile.mkdtemp(), "t.html")
    run(aiprof, "view", "--timeline", "-o", out, path, parse=False)
    html = open(out, encoding="utf-8").read()
    causes = json.loads(re.search(r'"causes":(\[[^\]]*\])', html).group(1))
    gap_causes = [json.loads(m) for m in re.findall(r'"cause":(\[[^\]]*\])', html)]
    return causes, gap_causes


def check_capture(aiprof, path):
    o = oracle(path)
    check(len(o["windows"]) == 1 and not o["calls"],
          "capture: one capture window (%s), no start-up call" % ", ".join(ms(b - a) for a, b in o["windows"]))
    expect = sum(b - a for a, b, _ in o["startup_gaps"])
    a, b, cov = max(o["startup_gaps"], key=lambda g: g[1] - g[0]) if o["startup_gaps"] else (0, 0, 0)
    check(b - a > 50_000_000 and cov > 0.9 * (b - a),
          "capture: the capture window covers %s of the %s gap" % (ms(cov), ms(b - a)))
    an = run(aiprof, "analyze", "--format", "json", path)
    row = causes_row(an)
    got = row.get("startup_ns")
    check(got is not None and abs(got - expect) <= 2 * len(o["startup_gaps"]),
          "capture: startup idle %s, the raw file's gaps covered by the capture %s" % (got, expect))
    check(row.get("host_bound_ns", 0) < 1_000_000,
          "capture: host_bound idle %s ns no longer holds the capture" % row.get("host_bound_ns"))
    first = largest_gaps(an)[:1]
    check(bool(first) and gap_text(b - a) in first[0] and "cause startup" in first[0],
          "capture: the largest gap is start-up idle (%r)" % first)
    causes, gap_causes = timeline_data(aiprof, path)
    k = causes.index("startup") if "startup" in causes else -1
    check(k >= 0 and any(gc.count(k) == len(o["startup_gaps"]) for gc in gap_causes),
          "capture: the timeline keys startup (%r) and draws %d start-up gap(s)" % (causes, len(o["startup_gaps"])))


def check_mi250(aiprof, path):
    o = oracle(path)
    check(len(o["calls"]) == 1 and o["calls"][0][0] == "hipLaunchKernel" and o["calls"][0][2] == 6_543_109,
          "mi250: one start-up call, hipLaunchKernel of 6.543109 ms (%r)" % o["calls"])
    check(len(o["startup_gaps"]) == 1, "mi250: one gap covered by it (%d)" % len(o["startup_gaps"]))
    if len(o["startup_gaps"]) != 1 or not o["steps"]:
        return
    a, b, cov = o["startup_gaps"][0]
    step = o["steps"][0]
    in_step = max(0, min(b, step[1]) - max(a, step[0]))
    check(cov == 6_543_109 - max(0, a - o["calls"][0][1]) - max(0, o["calls"][0][1] + 6_543_109 - b) and in_step == b - a,
          "mi250: the call covers %s of the %s gap, inside ProfilerStep#1" % (ms(cov), ms(b - a)))
    an = run(aiprof, "analyze", "--format", "json", path)
    row = causes_row(an)
    check(row.get("startup_ns") == b - a, "mi250: startup idle %s ns = the gap %d ns" % (row.get("startup_ns"), b - a))
    m = an["metrics"]
    got = m.get("idle_startup_ns", {}).get("value")
    check(got == in_step, "mi250: idle_startup_ns per steady step %s = the gap inside the step %d" % (got, in_step))
    d = run(aiprof, "diagnose", "--format", "json", path)
    text = gap_text(b - a)
    by = {f["bottleneck"]: [e for c in f["root_causes"] for e in c["evidence"]] for f in d["findings"]}
    check(bool(by.get("host_bound")) and not any(text in e for e in by.get("host_bound", [])),
          "mi250: the host_bound finding no longer cites the %s gap" % ms(b - a))
    check(any(text in e and "cause startup" in e for e in by.get("startup", [])),
          "mi250: the start-up finding cites it (%r)" % by.get("startup"))
    causes, gap_causes = timeline_data(aiprof, path)
    check("startup" in causes and any(causes.index("startup") in gc for gc in gap_causes),
          "mi250: the timeline draws the gap as startup (%r)" % causes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    ran = False
    for rel, fn in ((CAPTURE, check_capture), (MI250, check_mi250)):
        path = os.path.join(a.fixtures, rel)
        if not os.path.exists(path):
            print("skip " + rel + " (not found)")
            continue
        ran = True
        fn(a.aiprof, path)
    if not ran:
        return 77
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
