#!/usr/bin/env python3
"""aiprof's LLM phases and step figures on real CPU generate loops, checked
against this script's own computation from the raw trace JSON.

The traces (test/data/llm_cpu/, see its README) are torch.profiler recordings
of a tiny GPT's prefill + decode loop on CPU, annotated the three ways a user
would: "prefill"/"decode", SGLang's step[EXTEND|DECODE bs= toks=] and vLLM's
execute_<T>_context_<n>(...)_generation_<m>(...). For each trace the script
reads the raw Kineto JSON (no aiprof code) and computes

  - the steps: the parsed annotations, nested ones of one step counted once,
    a loop annotation around several steps not counted (its steps are);
  - each phase's steps, wall (the annotation spans: a CPU trace has no device
    work, so a step's wall is its span), host (= wall on CPU), device (0),
    tokens, requests, wall per token and wall per step;
  - the ProfilerStep#N step figures (count, warm-up left out by the rule of
    docs/analyses.md, mean, min, max);

and compares them with `aiprof analyze --only llm,steps --format json`; and
`aiprof whatif --scenario "scale aten::_scaled_dot_product_attention 0.5"`'s
per-step prediction with each steady step less half its attention calls. It
also checks the phase walls against the generator's own clock
(time.perf_counter_ns around each annotation, in <trace>.meta.json), which
owes nothing to the profiler, and that the LLM table of a CPU trace says
what its columns are.

With --generate it first records fresh traces with Debian's torch
(/usr/bin/python3, test/data/llm_cpu/gen_llm_cpu_traces.py) into a temporary
folder and checks those instead (heavy: runs torch; exit 77, skipped, when
/usr/bin/python3 has no torch).

Usage: llm_cpu_test.py --aiprof build/aiprof --data test/data/llm_cpu
                       [--tools ../shared/tools --generate]
"""

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


# --- the rules of src/analysis/llm/llm_phases.h, written again from the header text ---

def number_after(s, key):
    i = s.find(key)
    if i < 0:
        return None
    m = re.match(r"\d+", s[i + len(key):])
    return int(m.group(0)) if m else None


def says_decode(n):
    # "decode" or "decoding" in any case, not "decoder"
    return re.search(r"decod(e(?!r)|ing)", n, re.IGNORECASE) is not None


def parse_step(n):
    """(phase, tokens, requests) or None."""
    if n.startswith("step["):
        mode = re.match(r"step\[([^ \]]*)", n).group(1)
        phase = {"EXTEND": "prefill", "PREFILL": "prefill", "DECODE": "decode", "MIXED": "mixed"}.get(mode)
        if phase is None:
            return None
        return phase, number_after(n, "toks="), number_after(n, "bs=")
    if n.startswith("execute_"):
        t, c, g = number_after(n, "execute_"), number_after(n, "_context_"), number_after(n, "_generation_")
        if c is None or g is None or (c == 0 and g == 0):
            return None
        phase = "mixed" if c and g else "prefill" if c else "decode"
        return phase, t, c + g
    low = n.lower()
    prefill = "prefill" in low or "context_phase" in low
    decode = says_decode(n) or "generation_phase" in low
    if not prefill and not decode:
        return None
    return ("mixed" if prefill and decode else "prefill" if prefill else "decode"), None, None


def median(v):
    v = sorted(v)
    n = len(v)
    return 0.0 if n == 0 else (v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2)


def leading_warmup(durs):
    # docs/analyses.md: a leading step slower than median(rest) + max(3 x 1.4826 x MAD(rest),
    # 20% of median(rest)); at most half the steps, and at least 3 steps stay; none below 4 steps.
    if len(durs) < 4:
        return 0
    k = 0
    while k < min(len(durs) // 2, len(durs) - 3):
        rest = durs[k + 1:]
        med = median(rest)
        mad = median([abs(d - med) for d in rest])
        if durs[k] <= med + max(3 * 1.4826 * mad, 0.2 * med):
            break
        k += 1
    return k


def expected(trace_path):
    with gzip.open(trace_path, "rt") as f:
        events = json.load(f)["traceEvents"]
    ann = [e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    ns = 1000  # the Kineto JSON's ts/dur are integer microseconds
    steps = []
    for e in ann:
        lab = parse_step(e["name"])
        if lab:
            steps.append((e["pid"], e["ts"] * ns, (e["ts"] + e["dur"]) * ns, lab))
    steps.sort(key=lambda s: (s[0], s[1], -s[2]))
    # Nested annotations of one step: the outermost; but one that holds two
    # or more step annotations directly is a loop over steps: its children are.
    parent, children, stack = [None] * len(steps), [0] * len(steps), []
    for i, s in enumerate(steps):
        while stack and (steps[stack[-1]][0] != s[0] or s[1] >= steps[stack[-1]][2]):
            stack.pop()
        if stack:
            parent[i] = stack[-1]
            children[stack[-1]] += 1
        stack.append(i)
    kept, covered = [], [False] * len(steps)
    for i, s in enumerate(steps):
        if parent[i] is not None and covered[parent[i]]:
            covered[i] = True
        elif children[i] < 2:
            kept.append(s)
            covered[i] = True
    phases = {}
    prev_end = None
    for pid, start, end, (phase, toks, reqs) in kept:
        p = phases.setdefault(phase, {"steps": 0, "wall_ns": 0, "tokens": 0, "with_tokens": 0, "requests": 0})
        frm = max(start, prev_end) if prev_end is not None else start
        p["steps"] += 1
        p["wall_ns"] += max(0, end - frm)
        prev_end = end
        if toks is not None:
            p["tokens"] += toks
            p["with_tokens"] += 1
        if reqs is not None:
            p["requests"] += reqs
    prof = sorted((e["ts"] * ns, e["dur"] * ns) for e in ann if re.fullmatch(r"ProfilerStep#\d+", e["name"]))
    durs = [d for _, d in prof]
    # Note: a leading prefill step (one profiler step per forward) is an
    # outlier and so "warm-up" by this rule (notes/trial_ll.md finding 3).
    warm = leading_warmup(durs)
    steady = durs[warm:]
    # Each steady step's attention time: the outermost
    # aten::_scaled_dot_product_attention calls starting in it (single thread).
    sdpa = sorted((e["ts"] * ns, (e["ts"] + e["dur"]) * ns) for e in events
                  if e.get("ph") == "X" and e.get("name") == "aten::_scaled_dot_product_attention")
    attention = []
    for start, dur in prof[warm:]:
        total, end_seen = 0, -1
        for a, b in sdpa:
            if start <= a < start + dur and a >= end_seen:
                total += b - a
                end_seen = b
        attention.append(total)
    return phases, {"count": len(steady), "warmup": warm, "mean_ns": sum(steady) / len(steady),
                    "min_ns": min(steady), "max_ns": max(steady), "steady_ns": steady, "attention_ns": attention}


def run(aiprof, args):
    env = dict(os.environ, AIPROF_CALIBRATE="0")
    with tempfile.TemporaryDirectory() as home:
        env["XDG_CONFIG_HOME"] = env["XDG_DATA_HOME"] = home
        p = subprocess.run([aiprof] + args, capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != 0:
        sys.exit("aiprof %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr[-2000:]))
    return p.stdout


def block(section, key=None, kind=None):
    for b in section["blocks"]:
        if (key is None or b.get("key") == key) and (kind is None or b["type"] == kind):
            return b
    return None


def close(a, b, rel=1e-9, abs_=0.5):
    return a is not None and abs(a - b) <= max(abs_, rel * abs(b))


def check_trace(aiprof, trace, meta_path):
    name = os.path.basename(trace)
    meta = json.load(open(meta_path))
    phases, st = expected(trace)
    out = json.loads(run(aiprof, ["analyze", trace, "--only", "llm,steps", "--format", "json"]))
    llm = out["sections"]["llm"]
    check(block(llm, kind="values")["values"]["source"]["value"] == "annotations", name + ": phases from annotations")
    rows = {r["phase"]: r for r in block(llm, key="phases")["rows"]}
    check(set(rows) == set(phases), "%s: phases %s == expected %s" % (name, sorted(rows), sorted(phases)))
    # What the generator did: one prefill and D decodes per generate() call kept.
    calls = len([t for t in meta["forward_wall_ns"] if t[0] == "prefill"])
    check(phases.get("prefill", {}).get("steps") == calls and
          phases.get("decode", {}).get("steps") == calls * meta["decode_steps"],
          "%s: the raw JSON holds %d prefill and %d decode annotations" % (name, calls, calls * meta["decode_steps"]))
    for ph, e in phases.items():
        r = rows.get(ph)
        if r is None:
            continue
        pre = "%s %s: " % (name, ph)
        check(r["steps"] == e["steps"], pre + "steps %s == %d" % (r["steps"], e["steps"]))
        check(close(r["wall_ns"], e["wall_ns"]), pre + "wall %s == %d ns" % (r["wall_ns"], e["wall_ns"]))
        check("device_ns" not in r and r.get("host_op_ns", 0) > 0,
              pre + "a CPU run's table shows its ops' time, not a device column (%s)" % sorted(r))
        check(close(r["host_ns"], e["wall_ns"]), pre + "host %s == wall %d on a CPU trace" % (r["host_ns"], e["wall_ns"]))
        check(close(r["wall_per_step_ns"], e["wall_ns"] / e["steps"], 1e-6),
              pre + "wall per step %s == %.1f" % (r["wall_per_step_ns"], e["wall_ns"] / e["steps"]))
        if e["with_tokens"] == e["steps"] and e["tokens"] > 0:
            check(r["tokens"] == e["tokens"], pre + "tokens %s == %d" % (r["tokens"], e["tokens"]))
            check(close(r["wall_per_token_ns"], e["wall_ns"] / e["tokens"], 1e-6),
                  pre + "wall per token %s == %.1f" % (r["wall_per_token_ns"], e["wall_ns"] / e["tokens"]))
        else:
            check(r.get("tokens") is None and r.get("wall_per_token_ns") is None,
                  pre + "no tokens and no per-token time when the annotations give none")
        if e["requests"]:
            check(r["requests"] == e["requests"], pre + "requests %s == %d" % (r["requests"], e["requests"]))
        # The generator's own clock around each annotation (not the profiler's).
        own = sum(t[1] for t in meta["forward_wall_ns"] if t[0] == ph)
        check(0.85 * own <= r["wall_ns"] <= own, pre + "wall %s within [85%%, 100%%] of the generator's clock %d"
              % (r["wall_ns"], own))
    # Prompt tokens as the generator fed them.
    if "prefill" in phases and phases["prefill"]["with_tokens"]:
        check(rows["prefill"]["tokens"] == calls * sum(meta["prompt_tokens"]),
              "%s: prefill tokens == %d x %s prompt tokens" % (name, calls, meta["prompt_tokens"]))
    steps = out["sections"]["steps"]
    v = block(steps, kind="values")["values"]
    check(v["count"]["value"] == st["count"], "%s: steady steps %s == %d (%d warm-up left out)"
          % (name, v["count"]["value"], st["count"], st["warmup"]))
    check(out["metrics"]["warmup_steps"]["value"] == st["warmup"],
          "%s: warm-up steps %s == %d" % (name, out["metrics"]["warmup_steps"]["value"], st["warmup"]))
    check(close(v["mean_ns"]["value"], st["mean_ns"], 1e-9, 1.0),
          "%s: step mean %s == %.1f" % (name, v["mean_ns"]["value"], st["mean_ns"]))
    check(v["min_ns"]["value"] == st["min_ns"] and v["max_ns"]["value"] == st["max_ns"],
          "%s: step min/max %s/%s == %d/%d" % (name, v["min_ns"]["value"], v["max_ns"]["value"], st["min_ns"],
                                               st["max_ns"]))
    # The report carries the same llm section (it had none).
    with tempfile.TemporaryDirectory() as tmp:
        rep = os.path.join(tmp, "report.json")
        run(aiprof, ["report", trace, "-o", rep])
        sections = json.load(open(rep))["sections"]
        check("llm" in sections, "%s: the report has an llm section (%s)" % (name, sorted(sections)))
        if "llm" in sections:
            rep_rows = {r["phase"]: r for r in block(sections["llm"], key="phases")["rows"]}
            check(rep_rows == rows, "%s: the report's phases table is analyze's" % name)
    # What-if: attention twice as fast. On this single-threaded CPU trace each
    # step is the main thread's time, so it shortens by half of the step's
    # attention calls (their nested ops included), nothing else moves.
    scen = "scale aten::_scaled_dot_product_attention 0.5"
    w = json.loads(run(aiprof, ["whatif", trace, "--scenario", scen, "--format", "json"]))["scenarios"][0]
    got = [x for x in w["steps"] if x["steady"]]
    check(len(got) == st["count"], "%s: whatif replays %d steady steps == %d" % (name, len(got), st["count"]))
    for x, m, a in zip(got, st["steady_ns"], st["attention_ns"]):
        check(x["measured_ns"] == m and abs(x["predicted_ns"] - (m - a / 2)) <= 1000,
              "%s: whatif step %s: measured %s == %d, predicted %s == %d - %d/2 (attention)"
              % (name, x["step"], x["measured_ns"], m, x["predicted_ns"], m, a))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--tools", default=None, help="folder of gen_torch_traces.py (with --generate)")
    ap.add_argument("--generate", action="store_true", help="record fresh traces with torch first")
    args = ap.parse_args()
    aiprof = os.path.abspath(args.aiprof)
    data = os.path.abspath(args.data)
    tmp = None
    if args.generate:
        if subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True, cwd=data).returncode:
            print("skipped: /usr/bin/python3 cannot import torch")
            sys.exit(77)
        tmp = tempfile.TemporaryDirectory()
        cmd = ["/usr/bin/python3", os.path.join(data, "gen_llm_cpu_traces.py"), "--out", tmp.name]
        if args.tools:
            cmd += ["--tools", os.path.abspath(args.tools)]
        # not from /tmp: a stray inspect.py there breaks `import torch` (see the generator)
        subprocess.run(cmd, check=True, cwd=data, timeout=600)
        data = tmp.name
    metas = sorted(f for f in os.listdir(data) if f.endswith(".meta.json"))
    check(len(metas) >= 3, "%d traces in %s" % (len(metas), data))
    for m in metas:
        meta = json.load(open(os.path.join(data, m)))
        check_trace(aiprof, os.path.join(data, meta["file"]), os.path.join(data, m))
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
