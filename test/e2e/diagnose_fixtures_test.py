#!/usr/bin/env python3
"""Diagnosis on real traces: what each fixture is known to show (see
../shared/fixtures/torch-cpu/README.md), checked through `aiprof diagnose`.

- convnet channels_last and mixed convert layouts every step: a
  layout_conversion finding; contiguous has no conversion: none.
- elementwise unfused: fusion_missing ranked first; fused: no fusion finding.
- no trace here may carry a high-confidence finding for a bottleneck it does
  not have (a clean trace gets no high-confidence finding).
"""
import atexit
import gzip
import shutil
import argparse
import json
import os
import subprocess
import sys

FAILURES = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def diagnose(aiprof, path, *extra):
    p = subprocess.run([aiprof, "diagnose", path, "--format", "json", *extra], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        raise SystemExit("aiprof diagnose %s failed: %s" % (path, p.stderr))
    return json.loads(p.stdout)


def bottlenecks(d):
    return [f["bottleneck"] for f in d["findings"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    cpu = os.path.join(a.fixtures, "torch-cpu")
    d = {name: diagnose(a.aiprof, os.path.join(cpu, name + ".kineto.json"))
         for name in ["convnet_bs8_contiguous", "convnet_bs8_channels_last", "convnet_bs8_mixed",
                      "elementwise_bs4_unfused", "elementwise_bs4_fused"]}

    check("layout_conversion" in bottlenecks(d["convnet_bs8_channels_last"]), "channels_last: layout conversion found")
    check("layout_conversion" in bottlenecks(d["convnet_bs8_mixed"]), "mixed: layout conversion found")
    check("layout_conversion" not in bottlenecks(d["convnet_bs8_contiguous"]), "contiguous: no layout conversion")
    for name in ["convnet_bs8_channels_last", "convnet_bs8_mixed"]:
        f = [x for x in d[name]["findings"] if x["bottleneck"] == "layout_conversion"]
        if f:
            ev = [e for c in f[0]["root_causes"] for e in c["evidence"]]
            check(any("copy" in e or "clone" in e or "contiguous" in e or "_to_copy" in e for e in ev),
                  name + ": layout evidence names the converting ops: %r" % ev[:3])
            check(0 < f[0]["impact"]["share"] < 0.5, name + ": layout impact share is plausible")

    un = bottlenecks(d["elementwise_bs4_unfused"])
    check(un[:1] == ["fusion_missing"], "unfused: fusion_missing ranked first (got %r)" % un)
    check("fusion_missing" not in bottlenecks(d["elementwise_bs4_fused"]), "fused: no fusion finding")

    # Every finding carries its reason, and unevaluated rules name missing metrics.
    for name, diag in d.items():
        for f in diag["findings"]:
            check(f["confidence_reason"] != "", name + ": confidence has a reason")
            check(f["impact"]["basis"] in ("per step", "per trace", "trace span", "device memory"), name + ": impact has a basis")
        for ne in diag["not_evaluated"]:
            check(all(m["reason"] for m in ne["missing"]), name + ": not-evaluated rules say why")

    # A trace without the bottleneck gets no high-confidence finding of it.
    for name, wrong in [("convnet_bs8_contiguous", "layout_conversion"), ("elementwise_bs4_fused", "fusion_missing"),
                        ("convnet_bs8_channels_last", "fusion_missing")]:
        check(not [f for f in d[name]["findings"] if f["bottleneck"] == wrong and f["confidence"] == "high"],
              name + ": no high-confidence " + wrong)

    # suggest: target and constraints filter, and the report formats are well-formed.
    p = subprocess.run([a.aiprof, "suggest", os.path.join(cpu, "convnet_bs8_channels_last.kineto.json"),
                        "--target", "latency", "--constraints", "precision_loss<0.1%", "--format", "json"],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "suggest runs: " + p.stderr)
    s = json.loads(p.stdout)
    kept = [x for f in s["findings"] for x in f["suggestions"]]
    check(all(x["risk"]["precision_loss"] < 0.001 for x in kept), "suggest keeps only suggestions within the constraint")
    check(all(x["expected_gain"]["min"] <= x["expected_gain"]["max"] for x in kept), "gain ranges are ordered")
    # Real GPU and NPU traces: what each is known to show (read from their numbers).
    kin = os.path.join(a.fixtures, "kineto")
    r50 = diagnose(a.aiprof, os.path.join(kin, "kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz"))
    check(bottlenecks(r50)[:1] == ["data_loading"],
          "resnet50 with num_workers=0: data loading ranked first (got %r)" % bottlenecks(r50))
    advisor = diagnose(a.aiprof, os.path.join(a.fixtures, "ascend",
                       "Ascend__msprof-analyze__test__ut__advisor__timeline_advice__trace_view.json"))
    check("host_bound" in bottlenecks(advisor), "msprof-analyze advisor timeline: host-bound found")
    check(advisor["platform"].find("ascend") >= 0, "Ascend trace recognised as Ascend")
    npu = diagnose(a.aiprof, os.path.join(a.fixtures, "ascend-pt", "level1"))
    lay = [f for f in npu["findings"] if f["bottleneck"] == "layout_conversion"]
    check(bool(lay) and any("TransData" in e for c in lay[0]["root_causes"] for e in c["evidence"]),
          "torch_npu level1: TransData conversions found with evidence")
    nccl = diagnose(a.aiprof, os.path.join(kin, "HolisticTraceAnalysis__tests__data__nccl_parser_config__nccl_data.json.gz"))
    lay = [f for f in nccl["findings"] if f["bottleneck"] == "layout_conversion"]
    check(bool(lay) and any("nchwToNhwc" in e or "nhwcToNchw" in e for c in lay[0]["root_causes"] for e in c["evidence"]),
          "nccl A100 trace: cuDNN nchwToNhwc/nhwcToNchw conversions found")
    # nsys CloverLeaf (an FP64 CUDA hydro code, no PyTorch): no torch advice,
    # and its top finding (sync) gets a fix for a program without PyTorch.
    p = subprocess.run([a.aiprof, "suggest", os.path.join(a.fixtures, "nsys", "perlmutter-cloverleaf-cuda.sqlite"),
                        "--format", "json"], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "suggest on nsys CloverLeaf runs: " + p.stderr)
    clover = json.loads(p.stdout)
    check(clover["platform"] == "cuda", "CloverLeaf platform is cuda (got %r)" % clover["platform"])
    actions = [x["action"] for f in clover["findings"] for x in f["suggestions"]]
    check(not [x for x in actions if "torch" in x], "CloverLeaf: no torch advice (got %r)" % actions)
    sync = [f for f in clover["findings"] if f["bottleneck"] == "sync_bound"]
    check(bool(sync) and bool(sync[0]["suggestions"]), "CloverLeaf: the sync finding has a fix")
    check(not [c for f in clover["findings"] for c in f["root_causes"] if ".item()" in c["text"].split("PyTorch:")[0]],
          "CloverLeaf: causes name no torch call outside a 'PyTorch:' aside")
    # AMD MI300 (ROCm): the platform says rocm, and torch.cuda graphs still apply.
    mi300 = diagnose(a.aiprof, os.path.join(a.fixtures, "tracelens", "mi300__gaunernst_bert-small-uncased__1016001.json.gz"))
    check(mi300["platform"] == "pytorch, rocm", "MI300 platform is 'pytorch, rocm' (got %r)" % mi300["platform"])
    # Causes sharing an evidence topic show it once (sglang's host_bound causes).
    sgl = diagnose(a.aiprof, os.path.join(a.fixtures, "tracelens",
                   "inference__sglang_prefilldecode__sglang_Qwen3-8B_prefilldecode.json.gz"))
    for name, diag in [("sglang", sgl), ("mi300", mi300), ("nccl", nccl)]:
        for f in diag["findings"]:
            evs = [tuple(c["evidence"]) for c in f["root_causes"] if c["evidence"]]
            check(len(evs) == len(set(evs)), name + ": " + f["rule"] + ": no cause repeats another's evidence")
    # torch-cpu resnet18: the slow convolution once, as its innermost op.
    r18 = diagnose(a.aiprof, os.path.join(cpu, "resnet18_bs1_full.kineto.json"))
    tail = [e for f in r18["findings"] if f["rule"] == "long_tail_ops" for c in f["root_causes"] for e in c["evidence"]]
    check(tail and not [e for e in tail if e.startswith(("aten::conv2d ", "aten::convolution ", "aten::_convolution "))],
          "resnet18: long-tail evidence names mkldnn_convolution, not its wrappers (got %r)" % tail[:4])
    # vLLM's graph capture trace (TraceLens's capture_traces/): a capture,
    # not a run. Its captured launches counted here from the raw JSON, on
    # their own: launch/copy/set runtime calls (not graph launches) between a
    # thread's StreamBeginCapture end and its StreamEndCapture start.
    cap_path = os.path.join(a.fixtures, "tracelens", "inference__vllm_decode_full__capture_traces__"
                            "graph_capture_rank_0.1773709742341309550.pt.trace.json.gz")
    with gzip.open(cap_path, "rt") as fh:
        events = json.load(fh)["traceEvents"]
    calls = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")),
                   key=lambda e: (e["tid"], e["ts"]))
    windows, work, captured = {}, 0, 0
    for e in calls:
        if "StreamBeginCapture" in e["name"]:
            windows[e["tid"]] = e["ts"] + e["dur"]
        elif "StreamEndCapture" in e["name"]:
            windows.pop(e["tid"], None)
        elif "graphlaunch" not in e["name"].lower() and any(w in e["name"] for w in ("Launch", "Memcpy", "Memset")):
            work += 1
            captured += e["tid"] in windows and e["ts"] >= windows[e["tid"]]
    cap = diagnose(a.aiprof, cap_path)
    check(bool(cap["findings"]) and cap["findings"][0]["bottleneck"] == "graph_capture",
          "capture trace: the graph capture is said first (got %r)" % bottlenecks(cap))
    check(not {"host_bound", "compute"} & set(bottlenecks(cap)),
          "capture trace: no host-bound or compute finding about a capture (got %r)" % bottlenecks(cap))
    ev = [e for c in cap["findings"][0]["root_causes"] for e in c["evidence"]] if cap["findings"] else []
    check(captured > work / 2 and any(e.startswith("%d of %d launch calls" % (captured, work)) for e in ev),
          "capture trace: %d of %d launches captured, as the evidence says (got %r)" % (captured, work, ev))
    replay = diagnose(a.aiprof, os.path.join(a.fixtures, "tracelens", "inference__vllm_decode_full__graph_execution.json.gz"))
    check("graph_capture" not in bottlenecks(replay), "the replay trace is no capture (got %r)" % bottlenecks(replay))
    # Clean traces: no high-confidence finding at all.
    for name in ["convnet_bs8_channels_last", "elementwise_bs4_fused", "mlp_train_bs32", "transformer_enc_bs2"]:
        clean = d.get(name) or diagnose(a.aiprof, os.path.join(cpu, name + ".kineto.json"))
        check(not [f for f in clean["findings"] if f["confidence"] == "high"],
              name + ": a clean trace gets no high-confidence finding")

    # A stored knowledge card for the finding's bottleneck gives suggest a measured expectation.
    import tempfile
    cards_dir = tempfile.mkdtemp(prefix="aiprof_cards_")
    atexit.register(shutil.rmtree, cards_dir, True)
    db = os.path.join(cards_dir, "cards.db")
    p = subprocess.run([a.aiprof, "card", "--before", os.path.join(cpu, "convnet_bs8_contiguous.kineto.json"),
                        "--after", os.path.join(cpu, "convnet_bs8_channels_last.kineto.json"),
                        "--bottleneck", "layout_conversion", "--fix", "channels_last", "--db", db, "-o",
                        os.path.join(os.path.dirname(db), "card.md")], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "card stores a card: " + p.stderr)
    p = subprocess.run([a.aiprof, "suggest", os.path.join(cpu, "convnet_bs8_channels_last.kineto.json"),
                        "--target", "latency", "--db", db, "--format", "json"], capture_output=True, text=True,
                       timeout=300)
    s = json.loads(p.stdout)
    hist = [x.get("history") for f in s["findings"] if f["bottleneck"] == "layout_conversion" for x in f["suggestions"]]
    check(hist and all(h and "measured history" in h["card"] for h in hist), "suggest states the measured history")
    check(hist and hist[0] and hist[0]["gain"] > 0, "contiguous -> channels_last was a measured gain")
    p = subprocess.run([a.aiprof, "suggest", os.path.join(cpu, "convnet_bs8_channels_last.kineto.json"),
                        "--target", "latency", "--db", os.path.join(os.path.dirname(db), "none.db"), "--format",
                        "json"], capture_output=True, text=True, timeout=300)
    check(not os.path.exists(os.path.join(os.path.dirname(db), "none.db")), "suggest does not create a database")
    print("diagnose fixtures: %d passed, %d failed" % (CHECKS[0] - len(FAILURES), len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
