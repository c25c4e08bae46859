#!/usr/bin/env python3
"""The compute finding on graph-replayed and compiled traces, checked against
figures computed here from the raw JSON alone.

TraceLens's vLLM decode replay (MI300; one hipGraphLaunch replays 421 of the
434 device activities; no steps, so the impact base is the trace's 19.11 ms):
the device computes 10.72 ms, yet the finding's impact read 2.409 ms = 12.6%
(bounded by the main thread's span) and its classes held 329 us (the graph's
kernels sit under the graph launch, under no op). Its GEMMs are bf16 by their
names and it has no convolution, yet autocast and channels_last were proposed.
On xDiT Flux (torch.compile'd: Inductor's Triton kernels) fusion_missing said
"wrap the model with torch.compile". Checks, per trace:
  - vLLM: compute_op_ns, compute_op_ratio (of the trace span), the GEMM share
    (kernel names: _matmul_ogs*, Tensile Cijk_*), no convolution, all GEMM time
    16-bit by name, the Inductor (triton_poi_/red_/per_/tem_/for_) share; the
    autocast, channels_last, autotune and compile suggestions excluded;
  - Kineto's ResNet50 (V100, float32 cuDNN convolutions): autocast and
    channels_last kept;
  - MI300 ResNet (bf16 MIOpen convolutions): channels_last kept, autocast
    excluded; fusion_missing fires and proposes torch.compile (eager trace);
  - xDiT Flux: fusion_missing proposes compiling what runs eagerly, not
    torch.compile.
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys

VLLM = "tracelens/inference__vllm_decode_full__graph_execution.json.gz"
RESNET_FP32 = "kineto/kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz"
RESNET_BF16 = "tracelens/mi300__resnet_act_checkpoint.json.gz"
FLUX = "tracelens/inference__xdit_flux.1_aiter_sage__profile_trace_rank_0.json.gz"
DEVICE = ("kernel", "gpu_memcpy", "gpu_memset")
INDUCTOR = re.compile(r"^triton_(poi|red|per|tem|for)_")


def ns(us):
    return round(us * 1000)


def events(path):
    with gzip.open(path) as f:
        doc = json.load(f)
    return [e for e in (doc["traceEvents"] if isinstance(doc, dict) else doc) if e.get("ph") == "X"]


def vllm_oracle(path):
    xs = events(path)
    dev = [e for e in xs if e.get("cat") in DEVICE]
    gemm = [e for e in dev if "matmul" in e["name"] or e["name"].startswith("Cijk_")]
    # bf16 by name: "bf16" in the Triton GEMMs, Tensile's data type token BBS (bf16 in/out, fp32 compute).
    bf16 = [e for e in gemm if "bf16" in e["name"] or re.match(r"^Cijk_[A-Za-z]+_[A-Za-z]+_B", e["name"])]
    return {
        "span_ns": max(ns(e["ts"] + e["dur"]) for e in xs) - min(ns(e["ts"]) for e in xs),
        "device_ns": sum(ns(e["dur"]) for e in dev),
        "activities": len(dev),
        "gemm_ns": sum(ns(e["dur"]) for e in gemm),
        "gemm_bf16_ns": sum(ns(e["dur"]) for e in bf16),
        "conv_ns": sum(ns(e["dur"]) for e in dev if "conv" in e["name"].lower()),
        "inductor_ns": sum(ns(e["dur"]) for e in dev if INDUCTOR.match(e["name"])),
    }


def run(aiprof, args):
    env = dict(os.environ, AIPROF_CALIBRATE="0")
    p = subprocess.run([aiprof, *args, "--format", "json"], capture_output=True, text=True, timeout=600, env=env)
    if p.returncode != 0:
        raise AssertionError(f"{args}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def suggestions(doc):
    """(kept, excluded) as sets of "rule/id"."""
    kept = {f"{f['rule']}/{s['id']}" for f in doc["findings"] for s in f.get("suggestions", [])}
    excluded = {f"{s['rule']}/{s['id']}" for s in doc.get("excluded_suggestions", [])}
    return kept, excluded


def metric(doc, name):
    m = doc["metrics"].get(name)
    return None if m is None else (m["value"] if isinstance(m, dict) else m)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    failures = []

    def check(what, got, want, tol=0.0):
        if got is None or abs(got - want) > tol:
            failures.append(f"{what}: aiprof {got}, independent {want}")

    def expect(what, cond):
        if not cond:
            failures.append(what)

    path = os.path.join(a.fixtures, VLLM)
    o = vllm_oracle(path)
    expect(f"vLLM: 434 device activities in the raw file, {o['activities']}", o["activities"] == 434)
    expect("vLLM: no convolution in the raw file", o["conv_ns"] == 0)
    doc = run(a.aiprof, ["suggest", path, "--target", "throughput"])
    # 1 ns of import rounding per event boundary at most (434 activities).
    check("vLLM: impact base (the trace: no steps, no start-up)", metric(doc, "impact_base_ns"), o["span_ns"], 1_000)
    check("vLLM: compute_op_ns", metric(doc, "compute_op_ns"), o["device_ns"], 1_000)
    check("vLLM: compute_op_ratio", metric(doc, "compute_op_ratio"), o["device_ns"] / o["span_ns"], 1e-4)
    check("vLLM: compute_gemm_ratio", metric(doc, "compute_gemm_ratio"), o["gemm_ns"] / o["device_ns"], 1e-4)
    check("vLLM: compute_conv_ratio", metric(doc, "compute_conv_ratio"), 0)
    check("vLLM: compute_low_precision_ratio", metric(doc, "compute_low_precision_ratio"),
          o["gemm_bf16_ns"] / o["gemm_ns"], 1e-6)
    check("vLLM: compute_compiled_ratio", metric(doc, "compute_compiled_ratio"), o["inductor_ns"] / o["device_ns"], 1e-4)
    finding = next((f for f in doc["findings"] if f["rule"] == "compute_time"), None)
    expect("vLLM: no compute_time finding", finding is not None)
    kept, excluded = suggestions(doc)
    for s in ("lower_precision_compute", "channels_last_compute", "library_autotune", "compile_fuse"):
        expect(f"vLLM: compute_time/{s} not excluded", f"compute_time/{s}" in excluded)

    doc = run(a.aiprof, ["suggest", os.path.join(a.fixtures, RESNET_FP32), "--target", "throughput"])
    kept, excluded = suggestions(doc)
    for s in ("lower_precision_compute", "channels_last_compute"):
        expect(f"ResNet50 fp32: compute_time/{s} not kept: {sorted(excluded)}", f"compute_time/{s}" in kept)

    doc = run(a.aiprof, ["suggest", os.path.join(a.fixtures, RESNET_BF16), "--target", "throughput"])
    kept, excluded = suggestions(doc)
    expect("MI300 ResNet bf16: channels_last not kept", "compute_time/channels_last_compute" in kept)
    expect("MI300 ResNet bf16: autocast not excluded", "compute_time/lower_precision_compute" in excluded)
    expect("MI300 ResNet (eager): fusion_missing/torch_compile not kept", "fusion_missing/torch_compile" in kept)
    expect("MI300 ResNet (eager): compile_eager_rest not excluded", "fusion_missing/compile_eager_rest" in excluded)

    flux = os.path.join(a.fixtures, FLUX)
    triton = sum(1 for e in events(flux) if e.get("cat") == "kernel" and INDUCTOR.match(e["name"]))
    expect(f"Flux: {triton} Inductor kernels in the raw file", triton > 0)
    doc = run(a.aiprof, ["suggest", flux, "--target", "throughput"])
    kept, excluded = suggestions(doc)
    expect("Flux (compiled): fusion_missing/torch_compile not excluded", "fusion_missing/torch_compile" in excluded)
    expect("Flux (compiled): fusion_missing/compile_eager_rest not kept", "fusion_missing/compile_eager_rest" in kept)
    expect("Flux (compiled): compute_time/compile_fuse not excluded", "compute_time/compile_fuse" in excluded)

    for f in failures:
        print("FAIL:", f)
    print(f"independent (vLLM): {json.dumps(o)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
