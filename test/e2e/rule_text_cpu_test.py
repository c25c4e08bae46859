#!/usr/bin/env python3
"""Rule texts on CPU-only traces claim no device (rules/*.yaml).

Also over `aiprof suggest --format json` of the same traces (every finding,
evidence line, fix, gain and time base): no time base says a step ends at
"its last device work" (a CPU-only step launches none), and a GPU- or
training-only remedy (GradScaler, pin_memory, DALI, tensor cores, fused
optimizers, cuDNN, CUDA graphs) is named only in a clause that says where it
applies (GPU, device, CUDA or training). The suggestions said "float16 with a
GradScaler on older GPUs", "use fused optimizers (fused=True)" and
"pin_memory=True" to CPU inference runs (trial_ll).

`aiprof diagnose` over every CPU-only trace of the project (the before/after
pairs in test/data/pairs, the torch-cpu fixtures): a fired finding's title
must not name a device, GPU or kernel (a CPU-only trace has none), and its
description may name one only beside what happens on the CPU (it says "CPU",
"host" or "main thread" too) or as a condition ("on a device"). The data-loading finding was titled "The device
waits for input data" on these traces (trial_py X2).

  rule_text_cpu_test.py --aiprof build/aiprof --data test/data --fixtures ../shared/fixtures
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

DEVICE = re.compile(r"\b(device|devices|device's|GPU|GPUs|kernel|kernels)\b", re.I)
CPU_TOO = re.compile(r"\b(CPU|CPU-only|host|main thread|on a device)\b", re.I)


GPU_ONLY = re.compile(r"GradScaler|pin_memory|\bDALI\b|tensor cores|fused optimi[sz]ers|optimizers with|cudnn(?!/oneDNN)|CUDA graph",
                      re.I)
WHERE = re.compile(r"\b(GPU|GPUs|device|CUDA|training)\b", re.I)


def strings(node, path=""):
    """Every string value of a JSON document, with its key path."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from strings(v, path + "." + k)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v, path + "[]")
    elif isinstance(node, str):
        yield path, node


def check_suggest_texts(name, doc, failures):
    """The CPU-only texts of one `suggest --format json` document."""
    checked = 0
    for where, text in strings(doc):
        checked += 1
        if "last device work" in text:
            failures.append("%s: %s says the step ends at its last device work: %r" % (name, where, text[:200]))
        for clause in re.split(r"[;,]", text):
            if GPU_ONLY.search(clause) and not WHERE.search(clause):
                failures.append("%s: %s names a GPU- or training-only remedy without saying so: %r" %
                                (name, where, clause.strip()[:200]))
    return checked


def suggest(aiprof, path):
    env = dict(os.environ, AIPROF_CALIBRATE="0", XDG_CONFIG_HOME=tempfile.mkdtemp(),
               XDG_DATA_HOME=tempfile.mkdtemp())
    out = subprocess.run([aiprof, "suggest", "--format", "json", path], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return None, out.stderr
    return json.loads(out.stdout), ""


def diagnose(aiprof, path):
    env = dict(os.environ, AIPROF_CALIBRATE="0", XDG_CONFIG_HOME=tempfile.mkdtemp(),
               XDG_DATA_HOME=tempfile.mkdtemp())
    out = subprocess.run([aiprof, "diagnose", "--format", "json", path], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return path, None, out.stderr
    return path, json.loads(out.stdout), ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    traces = sorted(glob.glob(os.path.join(a.data, "pairs", "*.pt.trace.json.gz")))
    traces += sorted(glob.glob(os.path.join(a.fixtures, "torch-cpu", "*.kineto.json")))
    failures, checked, seen = [], 0, set()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for path, d, err in pool.map(lambda p: diagnose(a.aiprof, p), traces):
            name = os.path.basename(path)
            if d is None:
                failures.append("%s: diagnose failed: %s" % (name, err.strip()[-300:]))
                continue
            if "cpu" not in str(d.get("platform", "")):
                failures.append("%s: expected a CPU-only trace, platform %r" % (name, d.get("platform")))
                continue
            for f in d["findings"]:
                checked += 1
                seen.add(f["rule"])
                if DEVICE.search(f["title"]):
                    failures.append("%s: %s title claims a device: %r" % (name, f["rule"], f["title"]))
                if DEVICE.search(f["description"]) and not CPU_TOO.search(f["description"]):
                    failures.append("%s: %s description claims a device only: %r" %
                                    (name, f["rule"], f["description"]))
    texts = 0
    llm = sorted(glob.glob(os.path.join(a.data, "llm_cpu", "*.pt.trace.json.gz")))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for path, (doc, err) in zip(traces + llm, pool.map(lambda p: suggest(a.aiprof, p), traces + llm)):
            if doc is None:
                failures.append("%s: suggest failed: %s" % (os.path.basename(path), err.strip()[-300:]))
                continue
            texts += check_suggest_texts(os.path.basename(path), doc, failures)
    print("%d traces, %d findings checked, rules: %s; %d suggest texts checked" %
          (len(traces), checked, ", ".join(sorted(seen)), texts))
    if "data_loading" not in seen:
        failures.append("no data_loading finding on these traces: the test no longer checks it")
    for f in sorted(set(failures)):
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
