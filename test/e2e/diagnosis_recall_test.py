#!/usr/bin/env python3
"""Diagnosis recall on real before/after pairs: does `aiprof diagnose` name
the problem that was planted?

test/data/pairs holds eleven pairs of CPU torch.profiler traces (Debian's
torch 1.13), each BEFORE with one planted problem and AFTER with the
practitioner's fix (pairs.yaml says which); ../shared/fixtures/kineto has
the tb_plugin ResNet50 pair (DataLoader num_workers 0 and 4). For each pair
whose diagnosis names the planted problem, checked here:

- a finding among the BEFORE trace's first three names it (its rule, and
  where a rule can fire for other reasons, its evidence names the planted
  ops or region);
- in the AFTER trace that finding is gone or its impact (ms per step) lower.

And for the two problems where two findings claimed the same idle time:

- dataloader_workers: the data loader's per-sample ops and the 1 ms file
  reads between them were also a fusion candidate (fusion_missing 69.8% +
  data_loading 67.7% of the step): the two impacts must not sum past the
  base, and no fusion candidate may hold the loader's ops;
- log_every_step: the .tolist() time inside record_function("log_metrics")
  (no op runs: 22.2 ms per step, computed here from the raw JSON) was the
  "gaps" of a fusion candidate (fusion_missing 62.0%): fusion's impact plus
  that time must stay within the base.

Host regions (record_function labels that run no op for most of their
time: checkpoint, log_metrics; src/analysis/host_functions/host_regions.h)
are checked where the diagnosis carries the host_region_ratio metric: the
host_region finding in the top 3, gone or lower after the fix, and its
impact within 5% of the region's time without ops computed here from the
raw JSON (the metric missing on these CPU traces fails: the analysis
is no longer wired into `aiprof analyze`); --rules FILE tries a rule file.

Dtype round trips (cast_roundtrip: aten::to -> aten::_to_copy ->
aten::copy_ to float64 and straight back, src/analysis/casts): the
cast_roundtrip finding in the top 3 with "float -> double -> float" in its
evidence, gone or lower after the fix, and its impact within 1% of the
round trips' time per step computed here from the raw JSON (9.67 ms; the
metric missing fails: the analysis is not wired into `aiprof analyze`).

Pairs still missed ("not expected", printed with the reason, not asserted):

- unfused_gelu, unfused_layernorm: each op 0.1-0.6 ms without a page fault
  (first-touch faults up to 150 ms), so no CPU fusion run (ops under 500 us)
  holds them. A run rule by op class was measured and not shipped: with 3
  blocks per step a chain reaches 3 occurrences per step, under the rule's
  4, and its saving is mostly page-fault time (docs/analyses.md, fusion).
- defensive_clone: the copies (aten::clone) appear only as long-tail
  instances; no rule names a copy that the program makes and throws away.
- rebuild_mask: the mask and bias ops (arange, logspace, triu, masked_fill)
  are a few per cent of the step; no rule names work repeated with the same
  inputs every step.
- zero_grad_set_to_none: the zeroing is aten::zero_ inside
  Optimizer.zero_grad plus AccumulateGrad's add_; compute_time's evidence
  names data movement, not the zeroing; no rule.
- checkpoint_every_step, log_every_step, per_sample_postprocess (the region
  finding): see host regions above.
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys

FAILURES = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        FAILURES.append(what)


def not_expected(what, why):
    print("not expected (%s): %s" % (why, what))


RULES = []  # --rules: extra rule files passed to diagnose (a rule tried before it ships)


def diagnose(aiprof, path):
    extra = [x for r in RULES for x in ("--rules", r)]
    p = subprocess.run([aiprof, "diagnose", path, "--format", "json", *extra], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        raise SystemExit("aiprof diagnose %s failed: %s" % (path, p.stderr))
    return json.loads(p.stdout)


def evidence(f):
    return [e for c in f["root_causes"] for e in c["evidence"]]


def first(d, rule, needle=None):
    """(rank from 1, finding) of the first finding of `rule` whose evidence
    holds `needle` (any evidence when None); (None, None) when none."""
    for i, f in enumerate(d["findings"]):
        if f["rule"] == rule and (needle is None or any(needle in e for e in evidence(f))):
            return i + 1, f
    return None, None


def listing(d):
    return ", ".join("#%d %s %.1f%%" % (i + 1, f["rule"], 100 * f["impact"]["share"])
                     for i, f in enumerate(d["findings"]) if f["impact"].get("quantified"))


def region_noop_ms_per_step(path, region):
    """Mean per ProfilerStep of the time inside record_function(region) on
    the step thread where no cpu_op runs, from the raw JSON."""
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as fh:
        doc = json.load(fh)
    ev = [e for e in (doc["traceEvents"] if isinstance(doc, dict) else doc)
          if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]
    steps = [e for e in ev if e["name"].startswith("ProfilerStep#")]
    tid = steps[0]["tid"]
    ops = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e["cat"] == "cpu_op" and e["tid"] == tid)
    merged = []
    for a, b in ops:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    total = 0
    for e in ev:
        if e["cat"] == "user_annotation" and e["name"] == region:
            a, b = e["ts"], e["ts"] + e["dur"]
            total += (b - a) - sum(max(0, min(y, b) - max(x, a)) for x, y in merged)
    return total / len(steps) / 1000.0


def cast_roundtrip_ms_per_step(path):
    """Time per ProfilerStep of the dtype round trips on the step thread,
    from the raw JSON: outermost aten::to ops over an aten::copy_ whose two
    input types differ (input 0 is the destination), paired with the next
    such op when it casts the same shape back with at most 2 top-level ops
    between them; the pairs' two op durations, over the steps."""
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as fh:
        doc = json.load(fh)
    ev = [e for e in (doc["traceEvents"] if isinstance(doc, dict) else doc) if e.get("ph") == "X"]
    steps = [e for e in ev if e["name"].startswith("ProfilerStep#")]
    tid = steps[0]["tid"]
    ops = sorted((e for e in ev if e.get("cat") == "cpu_op" and e["tid"] == tid), key=lambda e: (e["ts"], -e["dur"]))
    top, casts = [], []
    for e in ops:
        if top and e["ts"] < top[-1]["ts"] + top[-1]["dur"]:
            if e["name"] == "aten::copy_" and top[-1]["name"] == "aten::to":
                t, d = e["args"]["Input type"], e["args"]["Input Dims"]
                if t[0] != t[1] and d[0] == d[1] and casts[-1][0] is top[-1]:
                    casts[-1][1:] = [t[1], t[0], d[0]]
            continue
        top.append(e)
        casts.append([e, None, None, None])
    total, i = 0, 0
    cast_at = [c for c in casts if c[1] is not None]
    index = {id(c[0]): k for k, c in enumerate(casts)}
    while i + 1 < len(cast_at):
        a, b = cast_at[i], cast_at[i + 1]
        between = index[id(b[0])] - index[id(a[0])] - 1
        if (a[1], a[2], a[3]) == (b[2], b[1], b[3]) and between <= 2:
            total += a[0]["dur"] + b[0]["dur"]
            i += 2
        else:
            i += 1
    return total / len(steps) / 1000.0


def recall(name, before, after, rule, needle, what):
    rank, f = first(before, rule, needle)
    check(rank is not None and rank <= 3,
          "%s: %s names the planted problem (%s) in the top 3 (got %s)" % (name, rule, what, listing(before)))
    if f is None:
        return
    _, g = first(after, rule, needle)
    check(g is None or g["impact"]["time_ms"] < f["impact"]["time_ms"],
          "%s: after the fix %s is gone or lower (%s -> %s ms per step)" %
          (name, rule, round(f["impact"]["time_ms"], 2), None if g is None else round(g["impact"]["time_ms"], 2)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True, help="test/data (holds pairs/)")
    ap.add_argument("--fixtures", required=True, help="../shared/fixtures (holds kineto/)")
    ap.add_argument("--rules", action="append", default=[], help="extra rule file for diagnose (repeatable)")
    a = ap.parse_args()
    RULES.extend(a.rules)
    pairs = os.path.join(a.data, "pairs")

    def pair(name):
        paths = [os.path.join(pairs, "%s_%s.pt.trace.json.gz" % (name, side)) for side in ("before", "after")]
        return paths, diagnose(a.aiprof, paths[0]), diagnose(a.aiprof, paths[1])

    # DataLoader(num_workers=0) with 1 ms per-sample reads on the main thread.
    _, b, af = pair("dataloader_workers")
    recall("dataloader_workers", b, af, "data_loading", None, "the data loader's wait")
    rank_d, dl = first(b, "data_loading")
    rank_f, fu = first(b, "fusion_missing")
    check(fu is None or (rank_d is not None and rank_d < rank_f),
          "dataloader_workers: data_loading ranked above fusion_missing (%s)" % listing(b))
    claimed = sum(f["impact"]["share"] for f in (dl, fu) if f is not None)
    check(claimed <= 1.0 + 1e-9, "dataloader_workers: data_loading + fusion_missing claim %.1f%% of the step (<= 100%%)"
          % (100 * claimed))
    # The loader's per-sample transform: rand, slice, flip, sub, div (gen_pairs.py); the model has no rand or flip.
    sequences = [m.group(1) for m in (re.match(r"(.*?): \d+ occurrences", e) for e in (evidence(fu) if fu else [])) if m]
    check(not [q for q in sequences if "aten::rand" in q or "aten::flip" in q],
          "dataloader_workers: no fusion candidate holds the data loader's ops (%r)" % sequences)

    # tb_plugin ResNet50: num_workers 0 vs 4 (the fixture pair).
    kin = os.path.join(a.fixtures, "kineto")
    r0 = diagnose(a.aiprof, os.path.join(kin, "kineto__tb_plugin__samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz"))
    r4 = diagnose(a.aiprof, os.path.join(kin, "kineto__tb_plugin__samples__resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz"))
    recall("resnet50 num_workers", r0, r4, "data_loading", None, "the data loader's wait")

    # .tolist() / .item() every step in record_function("log_metrics").
    paths, b, af = pair("log_every_step")
    noop = region_noop_ms_per_step(paths[0], "log_metrics")
    _, fu = first(b, "fusion_missing")
    base_ms = fu["impact"]["basis_ms"] if fu else None
    if fu:
        check(fu["impact"]["time_ms"] + noop <= base_ms * 1.001,
              "log_every_step: fusion_missing (%.2f ms) claims none of log_metrics' %.2f ms per step without ops "
              "(sum within the %.2f ms step)" % (fu["impact"]["time_ms"], noop, base_ms))
    else:
        check(True, "log_every_step: no fusion finding claims log_metrics' %.2f ms per step without ops" % noop)
    wired = "host_region_ratio" in b["metrics"]
    check(wired, "log_every_step: the diagnosis carries host_region_ratio (host_regions wired into analyze)")
    if wired:
        recall("log_every_step", b, af, "host_region", '"log_metrics"', 'record_function("log_metrics")')
        _, hr = first(b, "host_region", '"log_metrics"')
        if hr:
            check(abs(hr["impact"]["time_ms"] - noop) <= 0.05 * noop,
                  "log_every_step: host_region's %.2f ms per step agrees with the raw JSON's %.2f ms"
                  % (hr["impact"]["time_ms"], noop))
    else:
        not_expected("log_every_step: record_function(\"log_metrics\") named", "not wired: no host_region metrics")

    # torch.save every step in record_function("checkpoint").
    paths, b, af = pair("checkpoint_every_step")
    if wired:
        recall("checkpoint_every_step", b, af, "host_region", '"checkpoint"', 'record_function("checkpoint")')
        noop = region_noop_ms_per_step(paths[0], "checkpoint")
        _, hr = first(b, "host_region", '"checkpoint"')
        if hr:
            check(abs(hr["impact"]["time_ms"] - noop) <= 0.05 * noop,
                  "checkpoint_every_step: host_region's %.2f ms per step agrees with the raw JSON's %.2f ms"
                  % (hr["impact"]["time_ms"], noop))
    else:
        not_expected("checkpoint_every_step: record_function(\"checkpoint\") named",
                     "not wired: no host_region metrics; before: %s" % listing(b))

    # Softmax + top-5 one row at a time (128 rows) in record_function("postprocess").
    _, b, af = pair("per_sample_postprocess")
    recall("per_sample_postprocess", b, af, "fusion_missing", "aten::select -> aten::softmax -> aten::topk",
           "the per-row select/softmax/topk chain")

    # Two full copies per conv block (permute + contiguous, there and back).
    _, b, af = pair("layout_roundtrip")
    recall("layout_roundtrip", b, af, "layout_conversion", "aten::contiguous", "aten::contiguous")

    # Each conv block casts its input to float64 and straight back.
    paths, b, af = pair("cast_roundtrip")
    if "cast_roundtrip_ns" in b["metrics"]:
        recall("cast_roundtrip", b, af, "cast_roundtrip", "float -> double -> float on [8, 32, 32, 32]",
               "float -> double -> float")
        raw = cast_roundtrip_ms_per_step(paths[0])
        _, cr = first(b, "cast_roundtrip")
        if cr:
            check(abs(cr["impact"]["time_ms"] - raw) <= 0.01 * raw,
                  "cast_roundtrip: the finding's %.3f ms per step agrees with the raw JSON's %.3f ms"
                  % (cr["impact"]["time_ms"], raw))
    else:
        check(False, "cast_roundtrip: the diagnosis carries cast_roundtrip_ns (src/analysis/casts wired into "
              "analyze); before: %s" % listing(b))

    for name, why in [
        ("unfused_gelu", "3 blocks per step: at most 3 occurrences per step, under fusion_missing's 4; its ops are "
                         "0.1-0.6 ms without page faults and CPU fusion runs hold ops under 500 us only"),
        ("unfused_layernorm", "3 blocks per step: at most 3 occurrences per step, under fusion_missing's 4; its ops "
                              "are 0.1-0.6 ms without page faults and CPU fusion runs hold ops under 500 us only"),
        ("defensive_clone", "no rule names a copy made and thrown away"),
        ("rebuild_mask", "no rule names work repeated on the same inputs every step"),
        ("zero_grad_set_to_none", "no rule names the gradient zeroing"),
    ]:
        not_expected(name + ": planted problem named", why)

    print("%d checks, %d failed" % (CHECKS[0], len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
