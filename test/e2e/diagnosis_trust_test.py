#!/usr/bin/env python3
"""Diagnosis a sceptic trusts (issue 16), on the real fixtures and the shipped
AlexNet sample:

- every impact is wall-clock time per step (or per trace) with its base, and
  on every fixture the impacts of findings that cannot overlap (idle by cause,
  exposed copies, exposed communication, conversions) add up to at most the
  base; no impact exceeds it;
- AlexNet/A100: start-up dominated, said first, and the memcpy impact is at
  most the copies' own time (summed here from the trace JSON);
- resnet50 num_workers=0 is data loading first, num_workers=4 is not;
- defects: summary json/csv list every op by default and say when --top
  limited them; validate takes a .aiprof; a CSV-only torch_npu folder has the
  same steps in summary and analyze; validate prints text, not Markdown, to a
  terminal.
"""
import argparse
import csv
import glob
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

FAILURES = []
CHECKS = [0]
EXCLUSIVE = {"host_bound", "sync_bound", "data_loading", "memcpy", "communication_bound", "layout_conversion"}


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(aiprof, *args):
    p = subprocess.run([aiprof, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


_DIAGNOSED = {}


def diagnose(aiprof, path):
    # AlexNet and the two ResNet50 traces are checked again after the sweep
    # over every input: their documents from the sweep are read again.
    if (aiprof, path) not in _DIAGNOSED:
        rc, out, err = run(aiprof, "diagnose", path, "--format", "json")
        if rc != 0:
            raise SystemExit("aiprof diagnose %s failed: %s" % (path, err))
        _DIAGNOSED[(aiprof, path)] = out
    return json.loads(_DIAGNOSED[(aiprof, path)])


def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--sample", required=True)
    a = ap.parse_args()
    exe = a.aiprof
    tmp = tempfile.mkdtemp(prefix="aiprof_trust_")
    alexnet = os.path.join(a.sample, "alexnet_a100_kineto.json.gz")

    # 1. One time base: every fixture.
    inputs = sorted(glob.glob(os.path.join(a.fixtures, "kineto", "*.json.gz")) +
                    [p for p in glob.glob(os.path.join(a.fixtures, "torch-cpu", "*.json")) if not p.endswith(".meta.json")] +
                    [os.path.join(a.fixtures, "ascend-pt", "level0"), os.path.join(a.fixtures, "ascend-pt", "level1"),
                     alexnet])
    for path in inputs:
        name = os.path.basename(path)
        d = diagnose(exe, path)
        exclusive = 0.0
        base = None
        for f in d["findings"]:
            im = f["impact"]
            check(im["basis"] in ("per step", "per trace", "trace span", "device memory"), name + ": basis named")
            if im["basis"] in ("per step", "per trace"):
                base = im["basis_ms"]
                check(im["time_ms"] <= im["basis_ms"] * (1 + 1e-9) + 1e-9,
                      "%s: %s impact %.3f ms <= base %.3f ms" % (name, f["rule"], im["time_ms"], im["basis_ms"]))
                check(bool(im["basis_text"]), name + ": the base is described")
                if f["bottleneck"] in EXCLUSIVE and im["quantified"]:
                    exclusive += im["time_ms"]
        if base is not None:
            check(exclusive <= base * (1 + 1e-9) + 1e-9,
                  "%s: non-overlapping impacts %.3f ms <= base %.3f ms" % (name, exclusive, base))

    # AlexNet: start-up first; copies' impact within the copies' own time.
    d = diagnose(exe, alexnet)
    check(d["findings"][0]["bottleneck"] == "startup", "AlexNet: start-up dominated, said first")
    ev = [e for c in d["findings"][0]["root_causes"] for e in c["evidence"]]
    check(any("cudaDeviceGetStreamPriorityRange" in e for e in ev), "AlexNet: start-up evidence names the call")
    fixes = run(exe, "suggest", alexnet, "--format", "json")[1]
    check("torch.profiler.schedule" in fixes, "AlexNet: the fix is torch.profiler.schedule")
    # The memcpy impact counts copies and sets (idle_gaps.cc): bound by both.
    copies_ms = sum(e["dur"] for e in load_events(alexnet)
                    if e.get("ph") == "X" and e.get("cat") in ("gpu_memcpy", "gpu_memset")) / 1e3
    mem = [f for f in d["findings"] if f["bottleneck"] == "memcpy"]
    for f in mem:
        check(f["impact"]["time_ms"] <= copies_ms,
              "AlexNet: memcpy impact %.3f ms <= the copies' and sets' own %.3f ms" % (f["impact"]["time_ms"], copies_ms))
    rc, txt, _ = run(exe, "suggest", alexnet)
    check("36473" not in txt and "83.9% of" not in txt, "AlexNet: the old 36.5 s / 83.9% memcpy claim is gone")

    # resnet50: data loading with num_workers=0, not with 4.
    kin = os.path.join(a.fixtures, "kineto")
    r0 = diagnose(exe, glob.glob(os.path.join(kin, "*resnet50_num_workers_0*"))[0])
    r4 = diagnose(exe, glob.glob(os.path.join(kin, "*resnet50_num_workers_4*"))[0])
    check(r0["findings"][:1] and r0["findings"][0]["bottleneck"] == "data_loading",
          "resnet50 nw0: data loading first (got %r)" % [f["bottleneck"] for f in r0["findings"]])
    check(not [f for f in r4["findings"] if f["bottleneck"] == "data_loading" and f["confidence"] != "low"],
          "resnet50 nw4: no data-loading finding above low confidence")

    # 5a. summary json/csv list every op by default; --top says when it limited.
    conv = os.path.join(a.fixtures, "torch-cpu", "convnet_bs8_contiguous.kineto.json")
    s = json.loads(run(exe, "summary", conv, "--format", "json")[1])
    check(len(s["ops"]) == s["totals"]["ops"] and s["ops_listed"] == s["totals"]["ops"] and s["ops_limited_by_top"] is None,
          "summary json lists all %d ops by default (got %d)" % (s["totals"]["ops"], len(s["ops"])))
    s5 = json.loads(run(exe, "summary", conv, "--format", "json", "--top", "5")[1])
    check(len(s5["ops"]) == 5 and s5["ops_limited_by_top"] == 5, "summary json --top 5 says it limited the list")
    rc, out, err = run(exe, "summary", conv, "--format", "csv")
    check(len(list(csv.DictReader(io.StringIO(out)))) == s["totals"]["ops"], "summary csv lists all ops by default")
    rc, out, err = run(exe, "summary", conv, "--format", "csv", "--top", "5")
    check(len(list(csv.DictReader(io.StringIO(out)))) == 5 and "--top 5 listed 5 of" in err,
          "summary csv --top 5 says so on stderr: %r" % err)

    # 5b. .aiprof everywhere a trace is taken.
    native = os.path.join(tmp, "run.aiprof")
    rc, _, err = run(exe, "import", conv, "-o", native)
    check(rc == 0, "import writes a .aiprof: " + err)
    for args in (["validate", "--before", conv, "--after", native], ["validate", "--before", native, "--after", native],
                 ["summary", native], ["diagnose", native], ["analyze", native], ["suggest", native]):
        rc, out, err = run(exe, *args)
        check(rc == 0, "%s takes a .aiprof: %s" % (" ".join(args[:1] + [os.path.basename(x) for x in args[1:]]), err.strip()))

    # 5c. CSV-only torch_npu folder: one definition of steps.
    src = os.path.join(a.fixtures, "ascend-pt", "level1", "rank0_ascend_pt")
    dst = os.path.join(tmp, "csvonly", "rank0_ascend_pt")
    shutil.copytree(src, dst)
    os.remove(os.path.join(dst, "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
    folder = os.path.dirname(dst)
    s = json.loads(run(exe, "summary", folder, "--format", "json")[1])
    check([st["number"] for st in s["steps"]] == [50] and s["step_source"] == "step_trace_time.csv",
          "CSV-only folder: summary lists step 50 from step_trace_time.csv (got %r)" % s["steps"])
    rc, out, _ = run(exe, "analyze", folder, "--only", "steps", "--format", "json")
    steps = json.loads(out)["sections"]["steps"]["blocks"][0]["values"]["count"]["value"]
    check(steps == 1, "CSV-only folder: analyze finds the same one step (got %r)" % steps)
    rc, out, err = run(exe, "validate", "--before", folder, "--after", folder, "--format", "json")
    check(rc == 0 and json.loads(out)["metrics"][0]["n_before"] == 1, "CSV-only folder: validate samples the step: " + err)

    # 5d. validate without -o: a text rendering, no Markdown escapes.
    fused = os.path.join(a.fixtures, "torch-cpu", "elementwise_bs4_fused.kineto.json")
    unfused = os.path.join(a.fixtures, "torch-cpu", "elementwise_bs4_unfused.kineto.json")
    rc, out, _ = run(exe, "validate", "--before", unfused, "--after", fused)
    check(rc == 0 and "\\-" not in out and "\\_" not in out and "|---|" not in out and out.startswith("aiprof validate:"),
          "validate prints text to a terminal: %r" % out[:200])

    # 4. --draft-rule: a template that loads with the rule loader and fires on
    # the trace it came from; hostile names (hand-made trace) stay inert.
    for path in (alexnet, os.path.join(kin, "kineto__tb_plugin__samples__resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz")):
        draft = os.path.join(tmp, "draft.yaml")
        rc, _, err = run(exe, "diagnose", path, "--draft-rule", draft)
        check(rc == 0 and os.path.exists(draft), "draft-rule written: " + err)
        rc, out, err = run(exe, "diagnose", path, "--rules", draft, "--format", "json")
        check(rc == 0, "the drafted rule loads: " + err)
        if rc == 0:
            check(any(f["rule"].startswith("draft_") for f in json.loads(out)["findings"]),
                  os.path.basename(path) + ": the drafted rule fires on its own trace")
    evil = os.path.join(tmp, "evil.json")
    names = ['x"\nrules: []\n#', "</script><img src=x onerror=alert(1)>", "a: b\n- c"]
    events = [{"ph": "X", "name": n, "cat": "cpu_op", "pid": 1, "tid": 1, "ts": i * 100, "dur": 50}
              for i, n in enumerate(names * 5)]
    json.dump({"traceEvents": events}, open(evil, "w"))
    draft = os.path.join(tmp, "evil.yaml")
    rc, _, err = run(exe, "diagnose", evil, "--draft-rule", draft)
    rc2, _, err2 = run(exe, "diagnose", evil, "--rules", draft)
    check(rc == 0 and rc2 == 0, "a draft from hostile names loads: %s %s" % (err, err2))

    print("diagnosis trust: %d passed, %d failed" % (CHECKS[0] - len(FAILURES), len(FAILURES)))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
