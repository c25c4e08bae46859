#!/usr/bin/env python3
"""aiprof diff on real pairs, checked against independent computations over
the source JSON (no aiprof code):

  * ResNet50 num_workers=0 -> 4 (test/data): the largest per-step change is the
    data loading (the DataLoader iterator, matched by role across the
    single- and multi-process iterators), "faster"; its per-step times and the
    step wall times equal sums over the raw ProfilerStep and DataLoader spans
    of the steady steps (the last N steps, N as aiprof reports it); the time
    class that moved most is data loading; validate's statistics decide the
    step (>= 5 steady steps per run).
  * TraceLens H100 vs MI300 (../shared/fixtures/tracelens, bert-small and
    Falconsai): kernels differ by name and are matched through the op that
    launched them: for every kernel pair made "through op", the op in its
    path launched that kernel in both raw traces (correlation id -> runtime
    call -> innermost enclosing cpu_op); where TraceLens's own TraceDiff
    reference (tracediff_test__cpu_op_map.json: op -> kernels per trace, from
    its MI300 vs H100 regression test) knows a kernel, it names the same op.
  * Repeated ops by input shape (ResNet50 pair): every aten::conv2d of the
    forward pass is one node (53 convolutions, one name, one parent); the "By
    shape" rows pair them by their Input Dims / Input type, and each row's
    calls and time per step equal the raw cpu_op spans of that name and shape
    on the main thread in the steady steps, directly under the step.
    With the ops' "Call stack" args the rows are keyed by call site too
    (the stack cut at its first nn.Module frame or first frame outside
    torch's internals, re-implemented here from docs/diff.md) and the raw
    spans are grouped the same way.
  * Call sites (test/data/diff/callsite_{a,b}, Debian torch, with_stack): two
    same-shape aten::copy_ from two functions swap cost (and call order)
    between A and B; the "By shape" rows pair them by call site + shape and
    say the first got faster and the second slower, with per-row statistics,
    as the raw spans per call site show; pairing in order would have paired
    the two slow copies. The changes ranking and the headline name the
    row that moved most (its figures and Welch's p recomputed here from the
    raw spans per call site and step), not the op, whose net change is small;
    the op is not ranked beside its rows.
  * Every format renders; --map files are applied and bad ones are errors
    naming the file and line.
  * --timeline (ResNet50 pair): from the page's embedded data, slot k is as
    long as the longer of the two runs' steady step k (raw ProfilerStep
    spans; the longer run's extra steps get slots of their own), slots follow
    each other from 0 and are labelled with both durations; every slice of
    each run lies in its slot, within that run's step; each run's slices
    cover exactly the time the raw X events spend inside its steady steps;
    the largest change (the DataLoader iterator) is marked in every slot of
    both runs at the raw iterator spans, shifted by the slot.

  diff_e2e_test.py --aiprof BIN --data test/data --fixtures ../shared/fixtures
"""
import argparse
import bisect
import functools
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


@functools.lru_cache(maxsize=None)
def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def run_diff(aiprof, a, b, *extra):
    p = subprocess.run([aiprof, "diff", a, b, "--format", "json", *extra], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("aiprof diff failed: " + p.stderr)
    return json.loads(p.stdout)


def kv(doc, section):
    """The key/values of a section's first key/value block: {key: value}."""
    for block in doc["sections"][section]["blocks"]:
        if block.get("type") == "values":
            return {k: v.get("value") for k, v in block["values"].items()}
    raise KeyError(section)


def table(doc, section, key):
    for block in doc["sections"][section]["blocks"]:
        if block.get("type") == "table" and block.get("key") == key:
            return block["rows"]
    raise KeyError(key)


def steady_steps(events, n):
    """The last n ProfilerStep spans of the thread that has them, by start."""
    steps = sorted((e["ts"], e["dur"], e["tid"]) for e in events
                   if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
                   and e.get("cat") != "gpu_user_annotation")
    return steps[-n:]


def per_step_sum(events, steps, pred):
    """Sum of the durations (us) of spans `pred` accepts on the step's thread, clipped to the steps, per step."""
    total = 0.0
    for ts, dur, tid in steps:
        for e in events:
            if e.get("ph") == "X" and e.get("tid") == tid and pred(e):
                lo, hi = max(e["ts"], ts), min(e["ts"] + e["dur"], ts + dur)
                if hi > lo:
                    total += hi - lo
    return total / len(steps)


def resnet(a):
    before = os.path.join(a.data, "resnet50_num_workers_0.pt.trace.json.gz")
    after = os.path.join(a.data, "resnet50_num_workers_4.pt.trace.json.gz")
    doc = run_diff(a.aiprof, before, after)
    s = kv(doc, "diff")
    ea, eb = load_events(before), load_events(after)
    sa, sb = steady_steps(ea, s["steps_a"]), steady_steps(eb, s["steps_b"])
    check(s["steps_a"] >= 5 and s["steps_b"] >= 5, "resnet: >= 5 steady steps per run (%s, %s)" % (s["steps_a"], s["steps_b"]))
    wa = sum(d for _, d, _ in sa) / len(sa) * 1000
    wb = sum(d for _, d, _ in sb) / len(sb) * 1000
    check(abs(s["step_a_ns"] - wa) < 1 and abs(s["step_b_ns"] - wb) < 1,
          "resnet: step wall per step equals the raw ProfilerStep mean (%.0f vs %.0f, %.0f vs %.0f ns)"
          % (s["step_a_ns"], wa, s["step_b_ns"], wb))
    check(s["step_verdict"] == "improved" and s["step_test"] in ("welch", "mannwhitney"),
          "resnet: validate's statistics on the step: %s (%s, p=%s)" % (s["step_verdict"], s["step_test"], s["step_p_value"]))
    detail = next(b for b in doc["sections"]["diff"]["blocks"] if b.get("type") == "values")["values"]["step_a_ns"]
    check("last device work" in detail.get("detail", ""),
          "resnet (GPU run): the step's time base says whatif's step wall time runs on to the last device work")
    rows = table(doc, "changes", "changes")
    top = rows[0]
    check("DataLoader" in top["path"] and top["change"] == "faster" and top["match"] == "role",
          "resnet: largest per-step change is the data loading: %s (%s, %s)" % (top["path"], top["change"], top["match"]))
    is_dl = lambda e: str(e.get("name", "")).startswith("enumerate(DataLoader)#")
    da, db = per_step_sum(ea, sa, is_dl) * 1000, per_step_sum(eb, sb, is_dl) * 1000
    check(abs(top["a_ns"] - da) <= 1e-3 * da and abs(top["b_ns"] - db) <= 1e-3 * max(db, 1000),
          "resnet: data loading per step equals the raw spans (A %.0f vs %.0f, B %.0f vs %.0f ns)"
          % (top["a_ns"], da, top["b_ns"], db))
    check(abs(top["delta_ns"]) > 0.25 * s["step_a_ns"], "resnet: the data loading change is over 25%% of A's step")
    check(top["test"] in ("welch", "mannwhitney") and top["p_value"] is not None and top["p_value"] < 0.05,
          "resnet: per-node statistics on the data loading (%s, p=%s)" % (top["test"], top["p_value"]))
    classes = table(doc, "classes", "classes")
    check(classes[0]["class"] == "data loading", "resnet: the class that moved most is data loading (%s)" % classes[0]["class"])
    flame(a, before, after, wa, wb, da, db)
    shapes(run_diff(a.aiprof, before, after, "--top", "0"), ea, eb, sa, sb)
    timeline(a, before, after, ea, eb, sa, sb)
    return before, after


def call_site(stack):
    """The call site of a "Call stack" arg (innermost frame first, ';'-joined):
    the first nn.Module frame or frame outside torch's internals, folders
    dropped up to site-packages/dist-packages, else to the file name."""
    for f in (stack or "").split(";"):
        f = f.strip()
        if not f or f.startswith("<"):
            continue
        if f.startswith("nn.Module: "):
            return f
        if "(" not in f:
            continue
        path = f.split("(", 1)[0]
        if path.startswith("torch/") or "/torch/" in path:
            continue
        for m in ("site-packages/", "dist-packages/"):
            if m in path:
                return f[path.rfind(m) + len(m):]
        return f[path.rfind("/") + 1:]
    return ""


def timeline_data(path):
    with open(path, encoding="utf-8") as f:
        html = f.read()
    tag = '<script type="application/json" id="aiprof-data">'
    start = html.index(tag) + len(tag)
    return html, json.loads(html[start:html.index("</script>", start)])


def undelta(values):
    out, at = [], 0
    for v in values:
        at += v
        out.append(at)
    return out


def ns(us):
    return int(round(us * 1000))


def timeline(a, before, after, ea, eb, sa, sb):
    """--timeline: the page's data against the raw steps and events."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "timeline.html")
        p = subprocess.run([a.aiprof, "diff", before, after, "--timeline", out, "--format", "json"],
                           capture_output=True, text=True)
        check(p.returncode == 0, "timeline: diff --timeline exits 0 (%s)" % p.stderr.strip()[-200:])
        if p.returncode != 0:
            return
        html, d = timeline_data(out)
    check("Content-Security-Policy" in html, "timeline: the page carries the CSP")
    check("Time between steps is dropped" in d["note"], "timeline: the page says time between steps is dropped")
    steps = d["steps"]
    names = d["names"]
    # Raw steady steps in ns: (start, dur) per run.
    raw = [[(ns(ts), ns(ts + dur) - ns(ts)) for ts, dur, _ in sa], [(ns(ts), ns(ts + dur) - ns(ts)) for ts, dur, _ in sb]]
    n = max(len(raw[0]), len(raw[1]))
    slots = sorted((steps["ts"][i], steps["dur"][i], names[steps["n"][i]])
                   for i in range(len(steps["ts"])) if steps["rank"][i] == 0)
    check(len(slots) == n and len(raw[0]) != len(raw[1]),
          "timeline: one slot per step of the longer run (%d slots; A %d, B %d steady steps)"
          % (len(slots), len(raw[0]), len(raw[1])))
    at, ok_width, ok_label = 0, True, True
    for k, (ts, dur, label) in enumerate(slots):
        da = raw[0][k][1] if k < len(raw[0]) else None
        db = raw[1][k][1] if k < len(raw[1]) else None
        want = max(x for x in (da, db) if x is not None)
        if ts != at or dur != want:
            ok_width = False
            print("  slot %d: start %d (want %d), width %d (want max(%s, %s) = %d)" % (k + 1, ts, at, dur, da, db, want))
        fmt = lambda v: "%.2f ms" % (v / 1e6) if v is not None else "\u2014"
        if label != "step %d: A %s, B %s" % (k + 1, fmt(da), fmt(db)):
            ok_label = False
            print("  slot %d label: %r" % (k + 1, label))
        at += dur
    check(ok_width, "timeline: slot k = max(A's, B's raw steady step k), slots back to back from 0")
    check(ok_label, "timeline: slots labelled 'step k: A x ms, B y ms' with the raw durations")
    check(d["counts"]["detailed"] == d["counts"]["slices"], "timeline: every slice in full detail (%d)" % d["counts"]["slices"])
    # Every slice inside its slot, within its run's step; time per run.
    starts = [s[0] for s in slots]
    outside, total = 0, [0, 0]
    for row in d["rows"]:
        if row["kind"] != "slices":
            continue
        side = row["rank"] - 1
        if side not in (0, 1) or not row["label"].startswith("AB"[side] + ": "):
            outside += 1
            continue
        for ts, dur in zip(undelta(row["ts"]), row["dur"]):
            k = bisect.bisect_right(starts, ts) - 1
            if k < 0 or k >= len(raw[side]) or ts + dur > starts[k] + raw[side][k][1]:
                outside += 1
            total[side] += dur
    check(outside == 0, "timeline: every slice of each run lies in its slot, within its own step (%d outside)" % outside)
    for side, events in ((0, ea), (1, eb)):
        want = 0
        for e in events:
            if e.get("ph") != "X":
                continue
            lo, hi = ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0))
            for s0, sd in raw[side]:
                want += max(0, min(hi, s0 + sd) - max(lo, s0))
        check(total[side] == want, "timeline: run %s's slices cover the raw X events' time inside its steady steps "
              "(%d vs %d ns)" % ("AB"[side], total[side], want))
    # The largest change, the DataLoader iterator: marked on both runs in every
    # slot, from the first to the last raw iterator span on the step's thread.
    for side, events, st in ((0, ea, sa), (1, eb, sb)):
        marks = sorted((m["ts"], m["dur"]) for m in d["markers"]
                       if m["rule"] == "diff change #1" and m["rank"] == side + 1)
        want = []
        for k, (ts, dur, tid) in enumerate(st):
            spans = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events
                     if e.get("ph") == "X" and e.get("tid") == tid
                     and str(e.get("name", "")).startswith("enumerate(DataLoader)#")
                     and e["ts"] >= ts and e["ts"] + e["dur"] <= ts + dur]
            if spans:
                shift = starts[k] - ns(ts)
                lo, hi = min(x for x, _ in spans), max(y for _, y in spans)
                want.append((lo + shift, hi - lo))
        check(marks == want and len(want) == len(st),
              "timeline: the data loading change is marked on run %s in each of its %d steps at the raw spans (%s vs %s)"
              % ("AB"[side], len(st), marks[:2], want[:2]))


def shape_rows(events, steps, name):
    """{(dims, types, call site) as JSON text: (calls, us)} per step for the `name` ops of the
    steps' thread that start in a steady step and lie directly under the step
    (no enclosing op other than the step marker)."""
    by_tid = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("Operator", "cpu_op", "user_annotation"):
            by_tid.setdefault(e.get("tid"), []).append(e)
    out = {}
    for ts, dur, tid in steps:
        spans = [e for e in by_tid.get(tid, []) if e["ts"] < ts + dur and e["ts"] + e["dur"] > ts]
        outer = [e for e in spans if not str(e["name"]).startswith("ProfilerStep#")
                 and not str(e["name"]).startswith("[")]
        for e in outer:
            if e["name"] != name or not (ts <= e["ts"] < ts + dur):
                continue
            if any(o is not e and o["ts"] <= e["ts"] and o["ts"] + o["dur"] >= e["ts"] + e["dur"]
                   and (o["ts"], -o["dur"]) < (e["ts"], -e["dur"]) for o in outer):
                continue  # under another op or label: another node
            args = e.get("args", {})
            key = (json.dumps(args.get("Input Dims")), json.dumps(args.get("Input type")), call_site(args.get("Call stack")))
            c, t = out.get(key, (0, 0.0))
            out[key] = (c + 1, t + min(e["ts"] + e["dur"], ts + dur) - e["ts"])
    return {k: (c / len(steps), t / len(steps)) for k, (c, t) in out.items()}


def split_shape(label):
    """aiprof's shape label "DIMS TYPES" (the trace's JSON texts) → JSON texts as json.dumps writes them."""
    dec = json.JSONDecoder()
    dims, i = dec.raw_decode(label)
    rest = label[i:].strip()
    types = dec.raw_decode(rest)[0] if rest else None
    return json.dumps(dims), json.dumps(types)


def shapes(doc, ea, eb, sa, sb):
    rows = [r for r in table(doc, "shapes", "shapes") if r["path"] == "aten::conv2d"]
    check(len(rows) >= 3, "resnet: aten::conv2d split by input shape (%d changed shape rows)" % len(rows))
    ra, rb = shape_rows(ea, sa, "aten::conv2d"), shape_rows(eb, sb, "aten::conv2d")
    check(len(ra) >= 10, "resnet: raw JSON has many conv2d shapes under the step (%d)" % len(ra))
    bad = []
    for r in rows:
        if r["match"] != "call site + shape":
            bad.append("%s at %s matched by %r" % (r["shape"], r["site"], r["match"]))
            continue
        key = split_shape(r["shape"]) + (r["site"],)
        (ca, ta), (cb, tb) = ra.get(key, (0, 0)), rb.get(key, (0, 0))
        if abs(r["a_calls"] - ca) > 1e-9 or abs(r["b_calls"] - cb) > 1e-9 or \
                abs(r["a_ns"] - ta * 1000) > 1 or abs(r["b_ns"] - tb * 1000) > 1:
            bad.append("%s: aiprof %s/%s calls %.0f/%.0f ns, raw %s/%s calls %.0f/%.0f ns"
                       % (r["shape"], r["a_calls"], r["b_calls"], r["a_ns"], r["b_ns"], ca, cb, ta * 1000, tb * 1000))
    check(not bad, "resnet: every conv2d row paired by call site + shape, calls and time per step equal the raw spans%s"
          % ("" if not bad else ": " + "; ".join(bad[:3])))
    print("     checked %d conv2d shape rows against the raw JSON" % len(rows))
    allrows = table(doc, "shapes", "shapes")
    tested = [r for r in allrows if r["test"] != "none"]
    untested = [r for r in allrows if r["test"] == "none"]
    k = kv(doc, "shapes")
    check(0 < len(tested) <= k["shape_tested"],  # --top 0: every changed paired row is tested
          "resnet: the changed shape rows carry validate's statistics (%d rows)" % len(tested))
    check(all(r["no_test"] for r in untested) and all(not r["no_test"] for r in tested),
          "resnet: every shape row without a test says why (%s)" % sorted({r["no_test"] for r in untested}))
    check(k["shape_by_site"] + k["shape_by_function"] + k["shape_by_shape"] + k["shape_by_order"] <= k["shape_rows"],
          "resnet: row pairs per level (%s)" % {x: k[x] for x in k if x.startswith("shape_by")})
    slower = [r for r in rows if r["change"] == "slower"]
    if slower:
        r = slower[0]
        key = split_shape(r["shape"]) + (r["site"],)
        check(rb[key][1] > ra[key][1], "resnet: the slower conv2d shape is slower in the raw spans (%s)" % r["shape"])


def betacf(a, b, x):
    """Continued fraction of the regularized incomplete beta (Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((a + m2 - 1) * (a + m2)), -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betai(a, b, x):
    if x <= 0 or x >= 1:
        return 0.0 if x <= 0 else 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * betacf(b, a, 1 - x) / b


def welch_p(xa, xb):
    """Two-sided p of Welch's t-test (written here from the textbook formulas)."""
    na, nb = len(xa), len(xb)
    ma, mb = sum(xa) / na, sum(xb) / nb
    va = sum((x - ma) ** 2 for x in xa) / (na - 1)
    vb = sum((x - mb) ** 2 for x in xb) / (nb - 1)
    se2 = va / na + vb / nb
    t = (mb - ma) / math.sqrt(se2)
    df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    return betai(df / 2, 0.5, df / (df + t * t))


def callsites(a):
    """The call-site pair: per call site, the raw aten::copy_ time per steady step."""
    pa = os.path.join(a.data, "diff", "callsite_a.pt.trace.json.gz")
    pb = os.path.join(a.data, "diff", "callsite_b.pt.trace.json.gz")
    doc = run_diff(a.aiprof, pa, pb, "--top", "0")
    s = kv(doc, "diff")
    ea, eb = load_events(pa), load_events(pb)
    sa, sb = steady_steps(ea, s["steps_a"]), steady_steps(eb, s["steps_b"])
    check(s["steps_a"] >= 5 and s["steps_b"] >= 5, "callsite: >= 5 steady steps per run (%s, %s)" % (s["steps_a"], s["steps_b"]))

    def raw(events, steps):
        out, first, per = {}, [], {}
        for k, (ts, dur, tid) in enumerate(steps):
            copies = sorted((e for e in events if e.get("ph") == "X" and e.get("name") == "aten::copy_"
                             and e.get("tid") == tid and ts <= e["ts"] < ts + dur), key=lambda e: e["ts"])
            first.append(call_site(copies[0]["args"].get("Call stack")))
            for e in copies:
                site = call_site(e["args"].get("Call stack"))
                t = min(e["ts"] + e["dur"], ts + dur) - e["ts"]
                out[site] = out.get(site, 0.0) + t
                per.setdefault(site, [0.0] * len(steps))[k] += t * 1000
        return {k: v / len(steps) * 1000 for k, v in out.items()}, first, per

    (ra, first_a, pa_steps), (rb, first_b, pb_steps) = raw(ea, sa), raw(eb, sb)
    sites = sorted(ra)
    check(len(sites) == 2 and sorted(rb) == sites and all(x.endswith(("load_first", "load_second")) for x in sites),
          "callsite: raw JSON has two copy_ call sites in both runs (%s)" % sites)
    site_first = [x for x in sites if x.endswith("load_first")][0]
    site_second = [x for x in sites if x.endswith("load_second")][0]
    check(ra[site_first] > 2 * ra[site_second] and rb[site_second] > 2 * rb[site_first],
          "callsite: raw spans: the cost moved from load_first to load_second (A %.0f/%.0f, B %.0f/%.0f ns)"
          % (ra[site_first], ra[site_second], rb[site_first], rb[site_second]))
    # Order alone would pair A's first copy (load_first, slow) with B's first (load_second, slow).
    check(all(x == site_first for x in first_a) and all(x == site_second for x in first_b),
          "callsite: B calls the two in the other order (pairing in order would pair the slow copies)")
    k = kv(doc, "shapes")
    check(k["shape_by_site"] >= 2 and k["shape_by_order"] == 0 and k["shape_by_function"] == 0,
          "callsite: row pairs by call site + shape %s, by shape %s, in order %s"
          % (k["shape_by_site"], k["shape_by_shape"], k["shape_by_order"]))
    rows = {r["site"]: r for r in table(doc, "shapes", "shapes") if r["path"].endswith("aten::copy_")}
    check(sorted(rows) == sites, "callsite: both copy_ call sites are changed rows (%s)" % sorted(rows))
    for site, want in ((site_first, "faster"), (site_second, "slower")):
        r = rows.get(site)
        if r is None:
            continue
        check(r["match"] == "call site + shape" and r["change"] == want,
              "callsite: %s is %s (%s, matched by %s)" % (site, want, r["change"], r["match"]))
        check(abs(r["a_ns"] - ra[site]) <= 1 and abs(r["b_ns"] - rb[site]) <= 1,
              "callsite: %s per step equals the raw spans (A %.0f vs %.0f, B %.0f vs %.0f ns)"
              % (site, r["a_ns"], ra[site], r["b_ns"], rb[site]))
        check(r["test"] in ("welch", "mannwhitney") and r["p_value"] is not None and r["p_value"] < 0.01
              and r["ci_low_ns"] is not None and (r["ci_high_ns"] < 0 if want == "faster" else r["ci_low_ns"] > 0),
              "callsite: %s has validate's statistics (%s, p=%s, interval %s..%s ns)"
              % (site, r["test"], r["p_value"], r["ci_low_ns"], r["ci_high_ns"]))
        if r["test"] == "welch" and site in pa_steps and site in pb_steps:
            p = welch_p(pa_steps[site], pb_steps[site])
            check(r["p_value"] is not None and abs(math.log(r["p_value"]) - math.log(p)) < 1e-3,
                  "callsite: %s: Welch's p on the raw per-step sums, computed here, is aiprof's (%.6g vs %.6g)"
                  % (site, p, r["p_value"]))
    # The changes ranking and the headline name the row, not the op: the
    # op's net change hides two rows that moved in opposite directions.
    # Figures recomputed here from the raw spans (per call site, per step).
    ch = table(doc, "changes", "changes")
    top = ch[0] if ch else {}
    want_site = max(sites, key=lambda x: abs(rb[x] - ra[x]))
    check(top.get("kind") == "op row" and top.get("site") == want_site and top.get("path", "").endswith("aten::copy_"),
          "callsite: the changes table's #1 is the copy_ row of %s (%s, %s)" % (want_site, top.get("kind"), top.get("site")))
    check(abs(top.get("a_ns", 0) - ra[want_site]) <= 1 and abs(top.get("b_ns", 0) - rb[want_site]) <= 1
          and abs(top.get("delta_ns", 0) - (rb[want_site] - ra[want_site])) <= 2,
          "callsite: #1's per-step figures equal the raw spans of its call site (A %.0f vs %.0f, B %.0f vs %.0f ns)"
          % (top.get("a_ns", 0), ra[want_site], top.get("b_ns", 0), rb[want_site]))
    row_sites = sorted(r["site"] for r in ch if r["kind"] == "op row" and r["path"].endswith("aten::copy_"))
    check(row_sites == sites and not any(r["kind"] == "op" and r["path"].endswith("aten::copy_") for r in ch),
          "callsite: both copy_ rows are ranked and the op itself is not (no double counting): %s" % row_sites)
    pos = {r["site"]: r["rank"] for r in ch if r["kind"] == "op row" and r["path"].endswith("aten::copy_")}
    check(all(rows[x].get("ranked") == pos.get(x) for x in sites if x in rows),
          "callsite: 'By shape' gives each row's # in the changes table (%s vs %s)"
          % ({x: rows[x].get("ranked") for x in sites if x in rows}, pos))
    if top.get("test") == "welch" and want_site in pa_steps:
        p = welch_p(pa_steps[want_site], pb_steps[want_site])
        check(top.get("p_value") is not None and abs(math.log(top["p_value"]) - math.log(p)) < 1e-3,
              "callsite: #1's Welch p, computed here on the raw per-step sums, is aiprof's (%.6g vs %.6g)"
              % (p, top.get("p_value") or 0))
    else:
        check(top.get("test") in ("welch", "mannwhitney") and (top.get("p_value") or 1) < 0.01,
              "callsite: #1 has validate's statistics (%s, p=%s)" % (top.get("test"), top.get("p_value")))
    finding = None
    for block in doc["sections"]["diff"]["blocks"]:
        if block.get("type") == "finding" and block.get("key") == "largest_change":
            finding = block
    ev = {k: v.get("value") for k, v in (finding or {}).get("evidence", {}).items()} if finding else {}
    check(finding is not None and want_site in finding.get("title", "") and ev.get("site") == want_site
          and abs(ev.get("delta_ns", 0) - (rb[want_site] - ra[want_site])) <= 2
          and abs(ev.get("op_delta_ns", 0) - (sum(rb.values()) - sum(ra.values()))) <= 2
          and ev.get("test") == top.get("test") and ev.get("p_value") == top.get("p_value"),
          "callsite: the headline names the row (%s), its change (%s ns) and the op's net (%s ns vs raw %.0f)"
          % ((finding or {}).get("title"), ev.get("delta_ns"), ev.get("op_delta_ns"), sum(rb.values()) - sum(ra.values())))
    # --timeline marks the ranked row at its call site only: in every slot of
    # each run, from the first to the last raw copy_ span of that call site.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t.html")
        p = subprocess.run([a.aiprof, "diff", pa, pb, "--timeline", out, "-o", os.path.join(tmp, "t.txt")],
                           capture_output=True, text=True)
        check(p.returncode == 0, "callsite: diff --timeline exits 0 (%s)" % p.stderr.strip()[-200:])
        _, td = timeline_data(out)
        st = td["steps"]
        starts = sorted(st["ts"][i] for i in range(len(st["ts"])) if st["rank"][i] == 0)
        for side, events, steps in ((0, ea, sa), (1, eb, sb)):
            marks = sorted((m["ts"], m["dur"]) for m in td["markers"]
                           if m["rule"] == "diff change #1" and m["rank"] == side + 1)
            want = []
            for k, (ts, dur, tid) in enumerate(steps):
                spans = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events
                         if e.get("ph") == "X" and e.get("name") == "aten::copy_" and e.get("tid") == tid
                         and ts <= e["ts"] < ts + dur and call_site(e["args"].get("Call stack")) == want_site]
                if spans:
                    shift = starts[k] - ns(ts)
                    lo, hi = min(x for x, _ in spans), max(y for _, y in spans)
                    want.append((lo + shift, hi - lo))
            check(marks == want and len(want) == len(steps),
                  "callsite: --timeline marks #1 (%s) in run %s at the raw spans of that call site only, every slot "
                  "(%d markers, %d wanted; first %s vs %s)" % (want_site, "AB"[side], len(marks), len(want),
                                                                marks[:1], want[:1]))
    # Every format carries the row in the changes ranking (one document, shared renderers).
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("text", "md", "html"):
            out = os.path.join(tmp, "c." + fmt)
            p = subprocess.run([a.aiprof, "diff", pa, pb, "--format", fmt, "-o", out], capture_output=True, text=True)
            text = open(out, encoding="utf-8").read() if p.returncode == 0 else ""
            if fmt == "md":
                text = text.replace("\\", "")  # Markdown escapes _ ( ) [ ]
            ranking = text[text.find("Largest changes per step"):]
            ranking = ranking[:ranking.find("Time classes")]
            check(p.returncode == 0 and "op row" in ranking and want_site.split(": ")[-1] in ranking,
                  "callsite: the %s changes ranking names the op row of %s" % (fmt, want_site))
    # With too few steps the rows say why they have no test.
    with tempfile.TemporaryDirectory() as tmp:
        cut = []
        for name, events, steps in (("a", ea, sa), ("b", eb, sb)):
            keep = steps[:3]
            lo, hi = keep[0][0], keep[-1][0] + keep[-1][1]
            ev = [e for e in events if e.get("ph") != "X" or lo <= e.get("ts", 0) < hi]
            path = os.path.join(tmp, name + ".json")
            with open(path, "w") as f:
                json.dump({"traceEvents": ev}, f)
            cut.append(path)
        d3 = run_diff(a.aiprof, cut[0], cut[1], "--top", "0")
        rows3 = [r for r in table(d3, "shapes", "shapes") if r["path"].endswith("aten::copy_")]
        check(rows3 and all(r["test"] == "none" and "steady steps" in r["no_test"] for r in rows3),
              "callsite: with 3 steps per run the rows say why there is no test (%s)"
              % [r["no_test"] for r in rows3])


def flame_data(path):
    html = open(path, encoding="utf-8").read()
    start = html.index('<script type="application/json" id="flame-data">') + len('<script type="application/json" id="flame-data">')
    return json.loads(html[start:html.index("</script>", start)])


def flame(a, before, after, wa, wb, da, db):
    """--flame on the diff's alignment, against the raw JSON: the shown root
    is B's step per steady step, the baseline's A's; the loader frame of B
    (the multi-process iterator) carries A's single-process loader as its
    baseline (paired by role, which the flame view's own --diff, matching
    by path names, cannot do)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "flame.html")
        p = subprocess.run([a.aiprof, "diff", before, after, "--flame", out, "--format", "json"],
                           capture_output=True, text=True)
        check(p.returncode == 0, "flame: diff --flame exits 0 (%s)" % p.stderr.strip()[-200:])
        if p.returncode != 0:
            return
        d = flame_data(out)
        check(abs(d["total"][0] - wb) <= 2 and abs(d["diff"]["total"][0] - wa) <= 2,
              "flame: root totals are the raw steps per steady step (B %d vs %.0f, A %d vs %.0f ns)"
              % (d["total"][0], wb, d["diff"]["total"][0], wa))
        loaders = [i for i, n in enumerate(d["name"]) if d["names"][n].startswith("enumerate(DataLoader)#")]
        check(len(loaders) == 1 and d["diff"]["matched"][loaders[0]] == 1
              and abs(d["total"][loaders[0]] - db) <= 1e-3 * max(db, 1000)
              and abs(d["diff"]["total"][loaders[0]] - da) <= 1e-3 * da,
              "flame: B's loader frame is matched to A's loader by role, totals as the raw spans (%s)"
              % [(d["names"][d["name"][i]], d["total"][i], d["diff"]["total"][i]) for i in loaders])


def launch_index(events):
    """(correlation id -> the runtime call that launched it, (pid, tid) -> that thread's cpu_ops by start)."""
    runtime = {}
    ops_by_thread = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        corr = (e.get("args") or {}).get("correlation")
        if cat in ("cuda_runtime", "cuda_driver") and corr is not None:
            runtime[corr] = e
        if cat == "cpu_op":
            ops_by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
    for ops in ops_by_thread.values():
        ops.sort(key=lambda o: o["ts"])
    return runtime, ops_by_thread


def launched(events, runtime):
    """(device event, the runtime call that launched it) for each kernel, memcpy and memset with one."""
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        r = runtime.get((e.get("args") or {}).get("correlation"))
        if r is not None:
            yield e, r


def launchers(events):
    """kernel name -> set of names of the innermost cpu_op enclosing the runtime call that launched it."""
    runtime, ops_by_thread = launch_index(events)
    out = {}
    for e, r in launched(events, runtime):
        ops = ops_by_thread.get((r["pid"], r["tid"]), [])
        starts = [o["ts"] for o in ops]
        best = None
        for o in reversed(ops[:bisect.bisect_right(starts, r["ts"])]):
            if o["ts"] + o["dur"] >= r["ts"] + r["dur"] and (best is None or o["ts"] > best["ts"]):
                best = o
                break
        if best is not None:
            out.setdefault(e["name"], set()).add(best["name"])
    return out


def kernels_under(events, op):
    """[(kernel name, dur us)] of the device activity launched by a runtime call whose innermost
    enclosing cpu_op is named `op` (correlation id -> runtime call -> cpu_op), in launch order."""
    runtime, ops_by_thread = launch_index(events)
    out = []
    for e, r in launched(events, runtime):
        inner = [o for o in ops_by_thread.get((r["pid"], r["tid"]), [])
                 if o["ts"] <= r["ts"] and o["ts"] + o["dur"] >= r["ts"] + r["dur"]]
        if inner and max(inner, key=lambda o: o["ts"])["name"] == op:
            out.append((r["ts"], e["name"], e["dur"]))
    return [(n, d) for _, n, d in sorted(out)]


def falcon_conv_pairing(a, folder):
    """Finding 5 of trial_sceptic: the H100 convolution kernel (cuDNN's CUTLASS fprop, 98.2 us) was
    paired by position with an MI300 transpose (batched_transpose_256x4_half, 4.7 us) and ranked
    "faster -95%". Kernels of the convolution pair by kind (docs/diff.md, "Alignment rules"): the
    fprop with MIOpen's igemm_fwd, at the raw durations of the two kernels; the transposes with
    transposes; no pair puts a convolution/GEMM kernel beside a kernel of another kind."""
    model = "Falconsai_nsfw_image_detection__1016002"
    h100 = os.path.join(folder, "h100__%s.json.gz" % model)
    mi300 = os.path.join(folder, "mi300__%s.json.gz" % model)
    ka = kernels_under(load_events(h100), "aten::cudnn_convolution")
    kb = kernels_under(load_events(mi300), "aten::miopen_convolution")
    conv_a = [(n, d) for n, d in ka if "fprop" in n]
    conv_b = [(n, d) for n, d in kb if n.startswith("igemm_fwd")]
    check(len(conv_a) == 1 and len(conv_b) == 1,
          "falcon: one convolution kernel per run in the raw traces (%s; %s)" % (conv_a, conv_b))
    if len(conv_a) != 1 or len(conv_b) != 1:
        return
    doc = run_diff(a.aiprof, h100, mi300, "--top", "0")
    steps_a, steps_b = kv(doc, "diff")["steps_a"], kv(doc, "diff")["steps_b"]
    check(steps_a == 1 and steps_b == 1, "falcon: one steady step per run (%s, %s)" % (steps_a, steps_b))
    renamed = table(doc, "renamed", "renamed")
    pair = [r for r in renamed if r["kind"] == "device" and r["path"].endswith(conv_a[0][0] + " → " + conv_b[0][0])]
    check(len(pair) == 1 and pair[0]["match"] == "through op"
          and abs(pair[0]["a_ns"] - conv_a[0][1] * 1000) < 1 and abs(pair[0]["b_ns"] - conv_b[0][1] * 1000) < 1,
          "falcon: the fprop kernel pairs with igemm_fwd through the op, at the raw %.1f -> %.1f us (%s)"
          % (conv_a[0][1], conv_b[0][1], [(r["match"], r["a_ns"], r["b_ns"]) for r in pair]))
    def matrix(name):
        # Attention first: FlashAttention's kernels are CUTLASS templates.
        n = name.lower()
        return (not any(w in n for w in ("flash", "attn", "fmha", "attention"))
                and (n.startswith("cijk_") or any(w in n for w in ("fprop", "gemm", "cutlass", "conv"))))
    mixed = []
    for r in renamed + table(doc, "changes", "changes"):
        last = r["path"].split(" / ")[-1]
        if r["kind"] == "device" and " → " in last:
            x, y = last.split(" → ", 1)
            if matrix(x) != matrix(y):
                mixed.append((r["match"], last[:120]))
    check(not mixed, "falcon: no kernel pair puts a convolution/GEMM kernel beside another kind (%s)" % mixed[:3])
    transposes = [r for r in renamed if r["kind"] == "device"
                  and any(w in r["path"].split(" / ")[-1].lower() for w in ("nchwtonhwc", "nhwctonchw"))]
    check(len(transposes) == 2 and all("batched_transpose" in r["path"].split(" / ")[-1] for r in transposes),
          "falcon: cuDNN's two layout conversions pair with MIOpen transposes (%s)"
          % [r["path"].split(" / ")[-1][-60:] for r in transposes])
    ranked = [r["path"].split(" / ")[-1] for r in table(doc, "changes", "changes") if r["match"] == "by position, unverified"]
    check(not ranked, "falcon: no pair made by position alone is ranked (%s)" % ranked[:2])


def tracelens(a):
    folder = os.path.join(a.fixtures, "tracelens")
    ref = json.load(open(os.path.join(folder, "tracediff_test__cpu_op_map.json")))
    # TraceLens's test: trace1 = MI300, trace2 = H100.
    tl_op = {"h100": {}, "mi300": {}}
    for op, sides in ref.items():
        for side, hw in (("trace1", "mi300"), ("trace2", "h100")):
            for k in (sides.get(side) or {}).get("kernels", []):
                tl_op[hw].setdefault(k, set()).add(op)
    compared = 0
    for model in ("gaunernst_bert-small-uncased__1016001", "Falconsai_nsfw_image_detection__1016002"):
        h100 = os.path.join(folder, "h100__%s.json.gz" % model)
        mi300 = os.path.join(folder, "mi300__%s.json.gz" % model)
        doc = run_diff(a.aiprof, h100, mi300, "--top", "100000")
        s = kv(doc, "diff")
        check(s["through_op"] > 0, "%s: kernels matched through their op (%d pairs)" % (model, s["through_op"]))
        # Every kernel whose launching op exists on both sides pairs: the
        # unpaired device work (removed or added) is only under ops that one
        # side lacks (Falcon's cudnn_convolution vs miopen_convolution, for
        # the user's op map), never under an op both runs have. An H100 GEMM
        # launch is preceded by two other runtime calls, an MI300 one by
        # three: pairing runtime calls in plain order put the launches with
        # cudaMemsetAsync and left all 30 GEMM and attention kernels of
        # bert-small unpaired.
        rows = table(doc, "changes", "changes")
        # An op paired with its vendor twin (aten::cudnn_convolution →
        # aten::miopen_convolution, docs/diff.md) runs each vendor's own
        # kernels (one cuDNN GEMM against MIOpen's transposes, GEMM and set):
        # kernels left over under it are expected, and are not checked here.
        both = {r["path"] for r in rows if r["kind"] == "op" and r["change"] not in ("removed", "added")
                and " → " not in r["path"].split(" / ")[-1]}
        lone = [r["path"] for r in rows if r["kind"] == "device" and r["change"] in ("removed", "added")
                and any(r["path"].startswith(op + " / ") and r["path"].count(" / ") - op.count(" / ") == 2
                        for op in both)]
        check(not lone, "%s: no kernel left unpaired under an op both runs have (%d; %s)" % (model, len(lone), lone[:2]))
        la, lb = launchers(load_events(h100)), launchers(load_events(mi300))
        renamed = [r for r in table(doc, "renamed", "renamed") if r["kind"] == "device" and r["match"] == "through op"]
        bad = []
        for r in renamed:
            parts = r["path"].split(" / ")
            if len(parts) < 3 or " → " not in parts[-1]:
                bad.append(r["path"])
                continue
            ka, kb = parts[-1].split(" → ", 1)
            op = parts[-3]  # op / runtime call / kernel; "A's op → B's op" for vendor twins
            op_a, op_b = op.split(" → ", 1) if " → " in op else (op, op)
            if op_a not in la.get(ka, set()) or op_b not in lb.get(kb, set()):
                bad.append("%s: %s launched by %s in A, %s by %s in B" % (op, ka, la.get(ka), kb, lb.get(kb)))
            # Comparable where this trace launches the kernel from one op only,
            # and that op is one TraceLens saw launching it (a kernel such as a
            # vectorized add is launched by several ops across models).
            for hw, k, ours in (("h100", ka, la), ("mi300", kb, lb)):
                # TraceLens's 'root': it names no op for the kernel (the vendor
                # twins' convolution kernels), so it does not know it.
                if k in tl_op[hw] and tl_op[hw][k] != {"root"} and len(ours.get(k, ())) == 1:
                    compared += 1
                    if (op_a if hw == "h100" else op_b) not in tl_op[hw][k]:
                        bad.append("TraceLens: %s on %s is launched by %s, aiprof says %s" % (k, hw, tl_op[hw][k], op))
        check(renamed and not bad, "%s: every kernel pair made through an op has that op as launcher in both raw traces "
              "and agrees with TraceLens where it knows the kernel (%d pairs; %s)" % (model, len(renamed), bad[:3]))
        # Call sites from python_function frames (torch 2 traces: no "Call
        # stack" arg): every site shown is the cut of a frame of the raw trace.
        k = kv(doc, "shapes")
        frames = set()
        for path in (h100, mi300):
            for e in load_events(path):
                if e.get("cat") == "python_function":
                    c = call_site(e.get("name", ""))
                    if c:
                        frames.add(c)
        sites = {x for r in table(doc, "shapes", "shapes") for x in r["site"].split(" → ") if x != "(no call stack)"}
        check(k["shape_by_site"] > 0 and sites and sites <= frames,
              "%s: shape rows paired by call site from python_function frames (%d pairs; %d sites, all raw frames; %s)"
              % (model, k["shape_by_site"], len(sites), sorted(sites - frames)[:3]))
        # Independent: the step wall time per step.
        for path, key in ((h100, "step_a_ns"), (mi300, "step_b_ns")):
            st = steady_steps(load_events(path), s["steps_a" if key == "step_a_ns" else "steps_b"])
            w = sum(d for _, d, _ in st) / len(st) * 1000
            check(abs(s[key] - w) < 1, "%s: %s equals the raw ProfilerStep (%.0f vs %.0f)" % (model, key, s[key], w))
    check(compared > 0, "TraceLens's reference knows %d of the kernels paired (comparable)" % compared)
    map_across_vendors(a, folder)
    falcon_conv_pairing(a, folder)


def map_across_vendors(a, folder):
    """Falconsai H100 vs MI300 with a name map cudnn_convolution ->
    miopen_convolution: the two ops are one node (matched by the map), with
    each run's raw op time and the device time of the kernels launched
    inside the op (correlation -> runtime call inside the op's span)."""
    model = "Falconsai_nsfw_image_detection__1016002"
    h100 = os.path.join(folder, "h100__%s.json.gz" % model)
    mi300 = os.path.join(folder, "mi300__%s.json.gz" % model)
    with tempfile.TemporaryDirectory() as tmp:
        m = os.path.join(tmp, "vendors.yaml")
        with open(m, "w") as f:
            f.write("map:\n  - a: aten::cudnn_convolution\n    b: aten::miopen_convolution\n")
        doc = run_diff(a.aiprof, h100, mi300, "--map", m, "--top", "100000")
    s = kv(doc, "diff")

    def raw(path, op, steps):
        ev = load_events(path)
        spans = [e for e in ev if e.get("ph") == "X" and e.get("name") == op and e.get("cat") == "cpu_op"
                 and any(ts <= e["ts"] < ts + dur for ts, dur, _ in steps)]
        host = sum(e["dur"] for e in spans) * 1000 / len(steps)
        calls = {(e.get("args") or {}).get("correlation"): e for e in ev if e.get("ph") == "X"
                 and e.get("cat") in ("cuda_runtime", "cuda_driver") and (e.get("args") or {}).get("correlation") is not None}
        dev = 0.0
        for k in ev:
            if k.get("ph") != "X" or k.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
                continue
            r = calls.get((k.get("args") or {}).get("correlation"))
            if r is not None and any(o["tid"] == r["tid"] and o["ts"] <= r["ts"] and r["ts"] + r["dur"] <= o["ts"] + o["dur"]
                                     for o in spans):
                dev += k["dur"]
        return host, dev * 1000 / len(steps), len(spans)

    ha, da, na = raw(h100, "aten::cudnn_convolution", steady_steps(load_events(h100), s["steps_a"]))
    hb, db, nb = raw(mi300, "aten::miopen_convolution", steady_steps(load_events(mi300), s["steps_b"]))
    row = None
    for key in ("changes", "renamed"):
        for r in table(doc, key, key):
            if r["path"].endswith("aten::cudnn_convolution → aten::miopen_convolution") and r.get("kind") == "op":
                row = row or r
    check(s["by_map"] == 1 and row is not None and row["match"] == "map" and na == 1 and nb == 1,
          "%s --map: cudnn_convolution and miopen_convolution are one node, matched by the map (%s)"
          % (model, row and row["path"]))
    if row is not None:
        check(abs(row["a_ns"] - ha) <= 1 and abs(row["b_ns"] - hb) <= 1,
              "%s --map: the op's host time per step is each run's raw span (%.0f vs %.0f, %.0f vs %.0f ns)"
              % (model, row["a_ns"], ha, row["b_ns"], hb))
        if "a_device_ns" in row:
            check(da > 0 and db > 0 and abs(row["a_device_ns"] - da) <= 1 and abs(row["b_device_ns"] - db) <= 1,
                  "%s --map: its device time is the raw kernels launched inside it (%.0f vs %.0f, %.0f vs %.0f ns)"
                  % (model, row["a_device_ns"], da, row["b_device_ns"], db))


def formats_and_map(a, before, after):
    small = [os.path.join(a.fixtures, "tracelens", hw + "__gaunernst_bert-small-uncased__1016001.json.gz")
             for hw in ("h100", "mi300")]
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, needle in (("text", "Matched under different names"), ("md", "| "), ("html", "Content-Security-Policy"),
                            ("yaml", "document: \"diff\""), ("csv", "path")):
            out = os.path.join(tmp, "d." + fmt)
            p = subprocess.run([a.aiprof, "diff", *small, "--format", fmt, "-o", out], capture_output=True, text=True)
            check(p.returncode == 0 and needle in open(out, encoding="utf-8").read(), "format %s renders" % fmt)
        # Hostile names from the trace are escaped in HTML and Markdown.
        hostile = '<img src=x onerror=alert(1)>|*'
        for side, dur in (("ha", 100), ("hb", 300)):
            with open(os.path.join(tmp, side + ".json"), "w") as f:
                json.dump({"traceEvents": [
                    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
                    {"ph": "X", "cat": "cpu_op", "name": hostile + side, "pid": 1, "tid": 1, "ts": 10, "dur": dur}] + [
                    # Hostile call sites: two same-shape ops split by their call stack.
                    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 400 + 200 * k,
                     "dur": dur // 2 if k == 0 else 50,
                     "args": {"Input Dims": [[2, 2], [2, 2]],
                              "Call stack": "<built-in>;/x/m.py(%d): <img src=y onerror=alert(2)>|*;" % (k + 1)}}
                    for k in range(2)]}, f)
        for fmt in ("html", "md"):
            out = os.path.join(tmp, "h." + fmt)
            p = subprocess.run([a.aiprof, "diff", os.path.join(tmp, "ha.json"), os.path.join(tmp, "hb.json"), "-o", out],
                               capture_output=True, text=True)
            text = open(out, encoding="utf-8").read() if p.returncode == 0 else ""
            check(p.returncode == 0 and "onerror" in text and "<img src=x" not in text,
                  "hostile names are escaped (%s)" % fmt)
            check(p.returncode == 0 and "src=y onerror" in text and "<img src=y" not in text,
                  "hostile call sites are escaped (%s)" % fmt)
        good = os.path.join(tmp, "map.yaml")
        with open(good, "w") as f:
            f.write("map:\n  - a: /SingleProcessDataLoaderIter/\n    b: /MultiProcessingDataLoaderIter/\n")
        doc = run_diff(a.aiprof, before, after, "--map", good)
        check(kv(doc, "diff")["by_map"] == 1 and table(doc, "changes", "changes")[0]["match"] == "map",
              "--map: the DataLoader pair is made by the map entry")
        typo = os.path.join(tmp, "typo.yaml")
        with open(typo, "w") as f:
            f.write("map:\n  - a: /SingleProcessDataLoaderIter/\n    b: /MultiProcessingDataLoaderIter/\n"
                    "  - a: enumerate(DataLoader)#_SingleProcessDataLoaderIter.__nxt__\n    b: aten::nothing\n")
        names = {str(e.get("name")) for e in load_events(before)} | {str(e.get("name")) for e in load_events(after)}
        check("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__nxt__" not in names and "aten::nothing" not in names,
              "typo map: entry 2's names are in neither raw trace")
        doc = run_diff(a.aiprof, before, after, "--map", typo)
        f = next((b for b in doc["sections"]["diff"]["blocks"] if b.get("key") == "map_unmatched"), None)
        check(f is not None and "line 4: no name of A or B" in f.get("detail", "") and "line 2" not in f.get("detail", ""),
              "--map: the entry that matches no name (line 4) is named, the one that matched (line 2) is not (%s)"
              % (f or {}).get("detail"))
        extra = os.path.join(tmp, "extra.yaml")
        with open(extra, "w") as f:
            f.write("map:\n  - a: x\n    b: y\n    regex: true\n")
        p = subprocess.run([a.aiprof, "diff", before, after, "--map", extra], capture_output=True, text=True)
        check(p.returncode == 1 and extra + ":4:" in p.stderr and "'regex'" in p.stderr,
              "map entry with an unknown key: exit 1 naming file and line (%s)" % p.stderr.strip())
        bad = os.path.join(tmp, "bad.yaml")
        with open(bad, "w") as f:
            f.write("map:\n  - a: x\n    b: /[oops/\n")
        p = subprocess.run([a.aiprof, "diff", before, after, "--map", bad], capture_output=True, text=True)
        check(p.returncode == 1 and bad + ":2:" in p.stderr, "bad map: exit 1 naming file and line (%s)" % p.stderr.strip())
        p = subprocess.run([a.aiprof, "diff", small[0], os.path.join(tmp, "missing.json")], capture_output=True, text=True)
        check(p.returncode == 1 and "missing.json" in p.stderr, "missing run B: exit 1 naming the file")


def walk_steps(events, steps):
    """Yields (event, path, clipped time in ns) for every X slice on each
    step's thread, ProfilerStep left out: its path of names (the slices
    enclosing it, then its own), its time clipped to its parent and step; a
    slice counts in the step it starts in."""
    for ts, dur, tid in steps:
        xs = sorted((e for e in events if e.get("ph") == "X" and e.get("tid") == tid and ts <= e["ts"] < ts + dur
                     and not str(e.get("name", "")).startswith("ProfilerStep#")),
                    key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in xs:
            while stack and e["ts"] >= stack[-1][1]:
                stack.pop()
            end = min(e["ts"] + e["dur"], stack[-1][1] if stack else ts + dur)
            yield e, tuple(n for n, _ in stack) + (e["name"],), (end - e["ts"]) * 1000
            stack.append((e["name"], end))


def raw_paths(events, steps):
    """Per path of names, the total time (ns) and calls per step over
    `steps` (walk_steps)."""
    tot, calls = {}, {}
    for _, path, ns in walk_steps(events, steps):
        tot[path] = tot.get(path, 0.0) + ns
        calls[path] = calls.get(path, 0) + 1
    n = len(steps)
    return {k: (v / n, calls[k] / n) for k, v in tot.items()}


def raw_shapes(events, steps):
    """Per (path, Input Dims) of the op slices on the step's thread, the
    total time (ns) per step over `steps` (paths as raw_paths)."""
    out = {}
    for e, path, ns in walk_steps(events, steps):
        dims = (e.get("args") or {}).get("Input Dims")
        if e.get("cat") == "cpu_op" and dims is not None:
            key = (path, json.dumps(dims))
            out[key] = out.get(key, 0.0) + ns
    return {k: v / len(steps) for k, v in out.items()}


def planted_names(scenario):
    """The op and module names a pair's pre-registered whatif scenario
    (pairs.yaml) names: remove X; scale X f; fuse X Y ...;
    overlap-data-loading N (the DataLoader)."""
    names = set()
    for clause in scenario.split(";"):
        w = clause.split()
        if not w:
            continue
        if w[0] in ("remove", "fuse"):
            names.update(w[1:])
        elif w[0] == "scale":
            names.add(w[1])
        elif w[0] == "overlap-data-loading":
            names.add("enumerate(DataLoader)")
    return names


def names_planted(path, names):
    for part in path.split(" / "):
        for side in part.split(" → "):
            if any(side == n or side.startswith(n + "#") for n in names):
                return True
    return False


def pairs(a):
    """The 11 CPU before/after pairs (test/data/pairs): per pair, what only
    one run has (the raw JSON's paths in A and not in B, outermost first) is
    aiprof's removed / added time per step; every node entry of the changes
    ranking has the raw per-step time of its path in both runs; an added or
    removed entry is the outermost node of what was added or removed (its
    parent in both runs); the pre-registered planted change (pairs.yaml's
    scenario, written before the after runs) is named in the first three
    entries; added and removed entries carry no test, changed nodes in both
    runs carry one with p < alpha."""
    import yaml
    folder = os.path.join(a.data, "pairs")
    with open(os.path.join(folder, "pairs.yaml"), encoding="utf-8") as f:
        spec = yaml.safe_load(f)["pairs"]
    check(len(spec) == 11, "pairs: 11 pairs in pairs.yaml (%d)" % len(spec))
    for pair in spec:
        name = pair["name"]
        before = os.path.join(folder, name + "_before.pt.trace.json.gz")
        after = os.path.join(folder, name + "_after.pt.trace.json.gz")
        doc = run_diff(a.aiprof, before, after, "--top", "0")
        s = kv(doc, "diff")
        ea, eb = load_events(before), load_events(after)
        sa, sb = steady_steps(ea, s["steps_a"]), steady_steps(eb, s["steps_b"])
        wa = sum(d for _, d, _ in sa) / len(sa) * 1000
        wb = sum(d for _, d, _ in sb) / len(sb) * 1000
        check(abs(s["step_a_ns"] - wa) < 1 and abs(s["step_b_ns"] - wb) < 1,
              "%s: host step per step equals the raw ProfilerStep mean of the steady steps (%.0f vs %.0f, %.0f vs %.0f ns)"
              % (name, s["step_a_ns"], wa, s["step_b_ns"], wb))
        # A CPU run: no device work in the raw JSON, and the time base does
        # not send whatif's step wall time on to "the step's last device work".
        device = [e for e in ea + eb if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        detail = ""
        for block in doc["sections"]["diff"]["blocks"]:
            if block.get("type") == "values":
                detail = block["values"]["step_a_ns"].get("detail", "") + block["values"]["step_b_ns"].get("detail", "")
        check(not device and "device work" in detail and "last device work" not in detail,
              "%s: CPU run (no device events): the step's time base says whatif's step is the same span (%s)"
              % (name, detail[:120]))
        # Each run's warm-up, said: the raw ProfilerStep spans less the steady ones.
        vals = next(b for b in doc["sections"]["diff"]["blocks"] if b.get("type") == "values")["values"]
        said = []
        for key, ev, n in (("steps_a", ea, s["steps_a"]), ("steps_b", eb, s["steps_b"])):
            total = len(steady_steps(ev, 10 ** 9))
            said.append(("of %d steps; %d leading warm-up step%s left out" % (total, total - n, "" if total - n == 1 else "s"))
                        in vals[key].get("detail", ""))
        check(all(said), "%s: the steady steps' detail gives each run's steps and warm-up left out (%s / %s)"
              % (name, vals["steps_a"].get("detail"), vals["steps_b"].get("detail")))
        pa, pb = raw_paths(ea, sa), raw_paths(eb, sb)
        removed = sum(v[0] for k, v in pa.items() if k not in pb and (len(k) == 1 or k[:-1] in pb))
        added = sum(v[0] for k, v in pb.items() if k not in pa and (len(k) == 1 or k[:-1] in pa))
        # DataLoader iterators are paired by role: their own names differ.
        dl = lambda k: k and k[0].startswith("enumerate(DataLoader)#")
        if any(dl(k) for k in pa) and any(dl(k) for k in pb):
            role = lambda paths: {(("DL",) + k[1:] if dl(k) else k): v for k, v in paths.items()}
            ra, rb = role(pa), role(pb)
            removed = sum(v[0] for k, v in ra.items() if k not in rb and (len(k) == 1 or k[:-1] in rb))
            added = sum(v[0] for k, v in rb.items() if k not in ra and (len(k) == 1 or k[:-1] in ra))
        got_r, got_a = s.get("removed_ns", -1), s.get("added_ns", -1)
        check(abs(got_r - removed) <= 1e-6 * removed + 1 and abs(got_a - added) <= 1e-6 * added + 1,
              "%s: time only in A / only in B per step equals the raw outermost removed / added paths (%.0f vs %.0f, %.0f vs %.0f ns)"
              % (name, got_r, removed, got_a, added))
        share = s.get("removed_share")
        check(share is not None and abs(share - removed / wa) < 1e-9,
              "%s: removed share of A's step (%s vs %.4f)" % (name, share, removed / wa))
        rows = table(doc, "changes", "changes")
        bad = []
        for r in rows:
            if r["kind"] not in ("op", "module"):
                continue
            parts = r["path"].split(" / ")
            ka = tuple(x.split(" → ")[0] for x in parts)
            kb = tuple(x.split(" → ")[-1] for x in parts)
            want_a = pa.get(ka, (0, 0))[0] if r["change"] != "added" else 0
            want_b = pb.get(kb, (0, 0))[0] if r["change"] != "removed" else 0
            if abs(r["a_ns"] - want_a) > 1e-6 * want_a + 1 or abs(r["b_ns"] - want_b) > 1e-6 * want_b + 1:
                bad.append("%s: %.0f/%.0f vs raw %.0f/%.0f" % (r["path"], r["a_ns"], r["b_ns"], want_a, want_b))
            if r["change"] == "removed" and (kb in pb or (len(ka) > 1 and ka[:-1] not in pa) or
                                             (len(kb) > 1 and kb[:-1] not in pb and "→" not in r["path"])):
                bad.append("%s: not the outermost removed node" % r["path"])
            if r["change"] == "added" and (ka in pa or (len(ka) > 1 and ka[:-1] not in pa and "→" not in r["path"])):
                bad.append("%s: not the outermost added node" % r["path"])
            if r["change"] in ("added", "removed") and r["test"] != "none":
                bad.append("%s: %s with a test" % (r["path"], r["change"]))
            if r["change"] in ("slower", "faster") and not (r["test"] in ("welch", "mannwhitney") and r["p_value"] < 0.05):
                bad.append("%s: %s without validate's test (%s, %s)" % (r["path"], r["change"], r["test"], r["p_value"]))
        check(not bad, "%s: every op / module entry of the changes (%d) has the raw per-step times of its path, "
              "added / removed ones at their outermost node, untested, changed ones tested%s"
              % (name, len(rows), (": " + "; ".join(bad[:4])) if bad else ""))
        # An op in both runs that lost or gained an input shape: those
        # instances are a structural change, ranked (the op, or its rows)
        # even when the op's net change is noise.
        sha, shb = raw_shapes(ea, sa), raw_shapes(eb, sb)
        missing = []
        for mine, other, change in ((sha, shb, "removed"), (shb, sha, "added")):
            for (path, shape), ns_per_step in mine.items():
                if (path, shape) in other or ns_per_step < 1000 or path not in pa or path not in pb:
                    continue
                op = " / ".join(path)
                if not any(r["path"] == op and (r["kind"] == "op" or (r["kind"] == "op row" and r["change"] == change))
                           for r in rows):
                    missing.append("%s %s %s (%.0f ns per step)" % (op, shape, change, ns_per_step))
        check(not missing, "%s: every input shape an op in both runs lost or gained is ranked%s"
              % (name, (": " + "; ".join(missing[:3])) if missing else ""))
        names = planted_names(pair["scenario"])
        first = next((i for i, r in enumerate(rows) if names_planted(r["path"], names)), None)
        check(first is not None and first < 3,
              "%s: the planted change (%s) is named in the first three entries (#%s: %s)"
              % (name, pair["scenario"], None if first is None else first + 1,
                 rows[first]["path"] if first is not None else "-"))
        check(not any(b.get("key") in ("runs_unrelated", "steps_differ") for b in doc["sections"]["diff"]["blocks"]),
              "%s: no caveat (same program, recorded steps in both runs)" % name)
    # Same program, two separate runs (separate_rounds r1, r2): the step
    # test takes each run's steps as its samples, so run-level differences
    # count; the verdict says so, and these runs show why.
    aa = os.path.join(folder, "separate_rounds")
    verdicts = []
    detail = ""
    for pair in spec:
        for side in ("before", "after"):
            f = pair["name"] + "_" + side + ".pt.trace.json.gz"
            ra_, rb_ = os.path.join(aa, "r1", f), os.path.join(aa, "r2", f)
            if not (os.path.exists(ra_) and os.path.exists(rb_)):
                continue
            d = run_diff(a.aiprof, ra_, rb_)
            for block in d["sections"]["diff"]["blocks"]:
                if block.get("type") == "values":
                    detail = block["values"]["step_verdict"].get("detail", "")
            verdicts.append(kv(d, "diff")["step_verdict"])
    called = sum(v in ("improved", "regressed") for v in verdicts)
    print("     same-program separate runs: %d of %d step verdicts improved / regressed" % (called, len(verdicts)))
    check(len(verdicts) == 22 and "two runs of one program" in detail,
          "A/A (separate_rounds r1 vs r2, 22 runs): the step verdict's detail says run-level differences count as change "
          "(%d of %d called improved / regressed)" % (called, len(verdicts)))
    # Two different models: most of both runs in nodes the other lacks.
    x = os.path.join(folder, "cast_roundtrip_before.pt.trace.json.gz")
    y = os.path.join(folder, "rebuild_mask_before.pt.trace.json.gz")
    doc = run_diff(a.aiprof, x, y)
    s = kv(doc, "diff")
    keys = [b.get("key") for b in doc["sections"]["diff"]["blocks"]]
    check("runs_unrelated" in keys and s.get("removed_share", 0) > 0.5 and s.get("added_share", 0) > 0.5,
          "two models (cast_roundtrip vs rebuild_mask): flagged as two programs (%s; %s, %s)"
          % (keys, s.get("removed_share"), s.get("added_share")))
    # A run without step markers against one with them: steps of two kinds.
    with tempfile.TemporaryDirectory() as tmp:
        events = [e for e in load_events(x) if not str(e.get("name", "")).startswith("ProfilerStep#")]
        nosteps = os.path.join(tmp, "nosteps.json")
        with open(nosteps, "w") as f:
            json.dump({"traceEvents": events}, f)
        doc = run_diff(a.aiprof, nosteps, os.path.join(folder, "cast_roundtrip_after.pt.trace.json.gz"))
        keys = [b.get("key") for b in doc["sections"]["diff"]["blocks"]]
        check("steps_differ" in keys, "steps dropped from run A: the steps of two kinds are flagged (%s)" % keys)


def common_warmup(a):
    """--warmup-steps N leaves out the same N leading steps of both runs. On
    the interleaved defensive_clone pair the detected warm-up differs (none
    in A, four in B); with --warmup-steps 4 both step means are the raw
    ProfilerStep means of steps 5..12, and the counts say the flag set them."""
    folder = os.path.join(a.data, "pairs")
    before = os.path.join(folder, "defensive_clone_before.pt.trace.json.gz")
    after = os.path.join(folder, "defensive_clone_after.pt.trace.json.gz")
    detected = kv(run_diff(a.aiprof, before, after), "diff")
    check(detected["steps_a"] != detected["steps_b"],
          "warm-up: detected on its own, the two runs keep different step counts (%d, %d)"
          % (detected["steps_a"], detected["steps_b"]))
    doc = run_diff(a.aiprof, before, after, "--warmup-steps", "4")
    s = kv(doc, "diff")
    for side, path in (("a", before), ("b", after)):
        steps = sorted((e["ts"], e["dur"]) for e in load_events(path)
                       if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))
        want = sum(d for _, d in steps[4:]) / len(steps[4:]) * 1000
        check(s["steps_" + side] == len(steps) - 4 and abs(s["step_%s_ns" % side] - want) < 1,
              "warm-up: --warmup-steps 4, run %s: %d steady steps, mean %.0f ns (raw: %d, %.0f ns)"
              % (side.upper(), s["steps_" + side], s["step_%s_ns" % side], len(steps) - 4, want))
    details = [block["values"]["steps_" + side].get("detail", "") for block in doc["sections"]["diff"]["blocks"]
               if block.get("type") == "values" for side in ("a", "b")]
    check(all("--warmup-steps 4, in both runs" in d for d in details),
          "warm-up: the step counts say --warmup-steps set them (%s)" % details)


def host_bound(a):
    """trial_sceptic finding 11: bert-small H100 -> MI300's headline is a host node (-9.6% host time)
    while the GPUs got slower. The step section gives each run's device time per step, equal to the
    raw device events launched from runtime calls inside the steady steps, says both runs are
    host-bound (device time at most half the host step), and the headline says its change is the
    host's. And finding 12: diff with one run says it needs two (exit 2)."""
    folder = os.path.join(a.fixtures, "tracelens")
    paths = [os.path.join(folder, hw + "__gaunernst_bert-small-uncased__1016001.json.gz") for hw in ("h100", "mi300")]
    doc = run_diff(a.aiprof, *paths)
    s = kv(doc, "diff")
    for side, path in zip(("a", "b"), paths):
        ev = load_events(path)
        steps = steady_steps(ev, s["steps_" + side])
        launch = {}
        for e in ev:
            corr = (e.get("args") or {}).get("correlation")
            if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and corr is not None:
                launch[corr] = e["ts"]
        dev = 0.0
        for e in ev:
            if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
                continue
            t = launch.get((e.get("args") or {}).get("correlation"))
            if t is not None and any(st <= t < st + d for st, d, _ in steps):
                dev += e["dur"]
        want = dev / len(steps) * 1000
        got = s["device_%s_ns" % side]
        check(abs(got - want) < 0.01 * want + 1,
              "bert-small: device time per step in %s equals the raw device events launched in the steady steps "
              "(%.0f vs %.0f ns)" % (side.upper(), got, want))
    check(s["step_bound"].startswith("A host-bound") and ", B host-bound" in s["step_bound"],
          "bert-small: both runs host-bound (%s)" % s["step_bound"])
    head = [b for b in doc["sections"]["diff"]["blocks"] if b.get("key") == "largest_change"]
    check(head and "both runs are host-bound" in head[0]["detail"] and "the host's" in head[0]["detail"],
          "bert-small: the headline says its change is the host's (%s)" % (head[0]["detail"][-200:] if head else None))
    p = subprocess.run([a.aiprof, "diff", paths[0]], capture_output=True, text=True)
    check(p.returncode == 2 and "diff needs two runs: aiprof diff A B" in p.stderr,
          "diff with one run: exit 2, 'diff needs two runs' (%d: %s)" % (p.returncode, p.stderr.strip()[:120]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    before, after = resnet(a)
    callsites(a)
    tracelens(a)
    host_bound(a)
    formats_and_map(a, before, after)
    pairs(a)
    common_warmup(a)
    if FAILS:
        print("%d checks failed" % len(FAILS))
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
