#!/usr/bin/env python3
"""Truncated last steps (src/analysis/window/analysis_window.h,
TrailingTruncated), checked on a real trace against the raw file.

HolisticTraceAnalysis's mi250_minitoy_train_ROCm6_2 Kineto trace has two
ProfilerStep spans: #1 (9.29 ms, with the trace's kernels) and #2 (49 us),
inside which the profiler stopped: it launched nothing. Before, #2 counted as
a steady step: "4.67 ms +- 4.62 ms" and diagnose's host_bound "x30.34".

This script reads the raw JSON itself (no aiprof code): the ProfilerStep#N
host spans (user_annotation), and, for each device activity (kernel,
gpu_memcpy, gpu_memset), the runtime call of the same correlation id that
launched it; an activity belongs to the step its launch starts in. It checks
that the last step is the truncated one by the rule's own two tests (shorter
than 80% of the median of the steps before it, and no device work while the
others have some), then that aiprof's steady step time is the mean of the
other steps' spans (to 2 ns) and that summary, analyze, diagnose and report
say one truncated step was left out.

  truncated_steps_test.py --aiprof build/aiprof --fixtures ../shared/fixtures
"""
import argparse
import decimal
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile

REL = "kineto/HolisticTraceAnalysis__tests__data__amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz"
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def ns(v):
    return int((decimal.Decimal(str(v)) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def expected(path):
    with gzip.open(path, "rt") as f:
        ev = [e for e in json.load(f, parse_float=decimal.Decimal)["traceEvents"] if e.get("ph") == "X"]
    steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]) for e in ev
                   if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    launch = {e["args"]["correlation"]: ns(e["ts"]) for e in ev
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    work = [0] * len(steps)
    for e in ev:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        t = launch.get(e.get("args", {}).get("correlation"), ns(e["ts"]))
        for k, (s, end, _) in enumerate(steps):
            if s <= t < end:
                work[k] += 1
    return steps, work


def run(aiprof, *args, parse=True):
    env = dict(os.environ, AIPROF_CALIBRATE="0", XDG_CONFIG_HOME=tempfile.mkdtemp(), XDG_DATA_HOME=tempfile.mkdtemp())
    out = subprocess.run([aiprof, *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit("aiprof " + " ".join(args) + " failed: " + out.stderr)
    return json.loads(out.stdout) if parse else out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    path = os.path.join(a.fixtures, REL)
    if not os.path.exists(path):
        print("skip " + REL + " (not found)")
        return 77
    steps, work = expected(path)
    durs = [end - s for s, end, _ in steps]
    print(f"steps {[n for _, _, n in steps]}, spans {[d / 1e6 for d in durs]} ms, device activities {work}")
    check(len(steps) == 2, f"the raw trace has 2 ProfilerStep spans ({len(steps)})")
    earlier = durs[:-1]
    check(durs[-1] < 0.8 * statistics.median(earlier) and work[-1] == 0 and all(w > 0 for w in work[:-1]),
          f"the last step ({steps[-1][2]}, {durs[-1]} ns) is short and launched no device work")
    want = sum(earlier) / len(earlier)

    doc = run(a.aiprof, "analyze", path, "--format", "json")
    m = {k: v["value"] for k, v in doc["metrics"].items()}
    for name in ("step_time_mean_ns", "step_time_host_mean_ns", "impact_base_ns"):
        check(abs(m.get(name, -1) - want) <= 2, f"analyze {name} {m.get(name)} is the mean of the other steps {want}")
    check(m.get("impact_steps") == len(earlier), f"analyze impact_steps {m.get('impact_steps')}")
    check(m.get("truncated_steps") == 1, f"analyze truncated_steps {m.get('truncated_steps')}")
    check(m.get("warmup_steps") == 0, f"analyze warmup_steps {m.get('warmup_steps')} (the truncated step is not warm-up)")

    s = run(a.aiprof, "summary", path, "--format", "json")
    flags = [st.get("truncated", False) for st in s["steps"]]
    check(flags == [False] * (len(steps) - 1) + [True], f"summary lists every step, the last truncated: {flags}")
    text = run(a.aiprof, "summary", path, parse=False)
    check("1 truncated last step (ProfilerStep#2)" in text, "summary text names the truncated step")

    d = run(a.aiprof, "diagnose", path, "--format", "json")
    basis = d.get("impact_basis", "")
    check("mean of 1 steady-state step, 9.288 ms" in basis and "1 truncated last step left out" in basis,
          f"diagnose impact_basis: {basis}")
    check("x30.34" not in json.dumps(d), "diagnose no longer says x30.34 (the 49 us step in the base)")

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.md")
        run(a.aiprof, "report", path, "-o", out, parse=False)
        with open(out, encoding="utf-8") as f:
            md = f.read()
    line = next((l for l in md.splitlines() if "Step time:" in l), "")
    check(f"{want / 1e6:.2f} ms" in line and "1 truncated last step left out" in line, f"report: {line}")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
