#!/usr/bin/env python3
"""A CUDA/HIP-graph replay imported with its graph capture, written as a
native .aiprof file and loaded back (real TraceLens fixtures).

The merge adds "graph capture" tracks whose slices (captured ops re-timed
onto the replayed kernels) the op statistics leave out. The reader's check
of the stored statistics counted them, so every such file was refused
("corrupt .aiprof file ...: op statistics do not cover the slice table";
documentation trial, D1) while `import` exited 0.

For each input form the .aiprof's `summary --format json --top 0` (totals,
every op's count and times, op coverage, steps, diagnostics) must equal the
summary of the inputs read directly:
  * the replay trace with --capture-trace (vLLM decode);
  * TraceLens's folder layout, the replay beside capture_traces/ with its
    execution_details.json (vLLM decode, xDiT Flux);
  * the replay imported alone to .aiprof first (its op statistics stored),
    then imported with --capture-trace: the merge adds slices to a trace
    whose statistics were loaded, so they are computed again.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

FAILURES = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(aiprof, *args):
    p = subprocess.run([aiprof, *args], capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def summary(exe, *args):
    rc, out, err = run(exe, "summary", *args, "--format", "json", "--top", "0")
    if rc != 0:
        return None, err.strip()
    doc = json.loads(out)
    doc.pop("source", None)
    return doc, ""


def tracelens_folder(tl, tmp, name, replay, capture):
    """TraceLens's layout from the flattened fixture names (a__b__c -> a/b/c)."""
    folder = os.path.join(tmp, name)
    os.makedirs(os.path.join(folder, "capture_traces"))
    shutil.copy(os.path.join(tl, replay), os.path.join(folder, replay.split("__")[-1]))
    shutil.copy(os.path.join(tl, capture), os.path.join(folder, "capture_traces", capture.split("__")[-1]))
    shutil.copy(os.path.join(tl, capture.rsplit("__", 1)[0] + "__execution_details.json"),
                os.path.join(folder, "capture_traces", "execution_details.json"))
    return folder


def check_round_trip(exe, tmp, label, direct, imported=None):
    """Imports `imported` (default: `direct`) to .aiprof; its summary must be `direct`'s."""
    native = os.path.join(tmp, "graph.aiprof")
    rc, _, err = run(exe, "import", *(imported or direct), "-o", native)
    check(rc == 0 and os.path.exists(native), label + ": import writes the .aiprof: " + err.strip())
    want, err1 = summary(exe, *direct)
    got, err2 = summary(exe, native)
    check(want is not None, label + ": summary of the inputs read directly: " + err1)
    check(got is not None, label + ": summary of the .aiprof: " + err2)
    if want is not None and got is not None:
        diffs = [k for k in sorted(set(want) | set(got)) if want.get(k) != got.get(k)]
        check(not diffs, label + ": summary of the .aiprof equals the inputs'; differs in %s" % diffs)
        check(want["ops"] and want["totals"]["slices"] > 0, label + ": the summary lists ops")
        print("%s: %d slices, %d ops, op coverage %s" % (label, got["totals"]["slices"], len(got["ops"]),
                                                          json.dumps(got.get("op_coverage"))[:120]))
    if os.path.exists(native):
        os.remove(native)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    exe = a.aiprof
    tl = os.path.join(a.fixtures, "tracelens")
    vllm = "inference__vllm_decode_full__graph_execution.json.gz"
    vllm_capture = "inference__vllm_decode_full__capture_traces__graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"
    xdit = "inference__xdit_flux.1_aiter_sage__profile_trace_rank_0.json.gz"
    xdit_capture = "inference__xdit_flux.1_aiter_sage__capture_traces__capture_trace_rank_0.json.gz"
    tmp = tempfile.mkdtemp(prefix="aiprof_graph_native_")
    try:
        with_capture = [os.path.join(tl, vllm), "--capture-trace", os.path.join(tl, vllm_capture)]
        check_round_trip(exe, tmp, "vllm --capture-trace", with_capture)
        for name, replay, capture in [("vllm_decode", vllm, vllm_capture), ("xdit_flux", xdit, xdit_capture)]:
            folder = tracelens_folder(tl, tmp, name, replay, capture)
            check_round_trip(exe, tmp, name + " folder", [folder])
            if name == "vllm_decode":
                # The replay FILE given alone beside its capture: read alone,
                # and a note (not a malformed record) names what merges it.
                rc, _, err = run(exe, "analyze", "--only", "steps", os.path.join(folder, replay.split("__")[-1]))
                details = os.path.join(folder, "capture_traces", "execution_details.json")
                check(rc == 0 and f"aiprof: note: {details}: this trace replays" in err,
                      "replay file beside its capture: noted: " + err.strip()[:300])
                check("malformed" not in err, "replay file beside its capture: no malformed records: " + err.strip()[:300])
                check(f"give the folder instead (aiprof analyze {folder})" in err, "the note names the folder")
            shutil.rmtree(folder)
        replay_native = os.path.join(tmp, "replay.aiprof")
        rc, _, err = run(exe, "import", os.path.join(tl, vllm), "-o", replay_native)
        check(rc == 0, "vllm replay alone: import writes the .aiprof: " + err.strip())
        check_round_trip(exe, tmp, "vllm replay .aiprof --capture-trace", with_capture,
                         [replay_native, "--capture-trace", os.path.join(tl, vllm_capture)])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("graph capture native: %d passed, %d failed" % (CHECKS[0] - len(FAILURES), len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
