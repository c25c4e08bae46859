#!/usr/bin/env python3
"""Two real torch traces of test/data/fresh (README there), figures computed
here from the trace itself and compared with `aiprof analyze --format json`:

1. exc_out.kineto.json: an exception leaves the training loop in a step's
   forward, the profiler stops there. Its last ProfilerStep is cut (no
   backward, no optimizer step): it is left out as a truncated last step
   (src/analysis/window, CutLastStep), so the steady steps are the others and
   the base is their mean; the evidence names the step and an op every
   earlier step holds that it lacks. The same trace with one op recorded
   after that step (the recording goes on) keeps every step.
2. midepoch.kineto.json: the last step is as short and ends the recording,
   but is whole (an "epoch 2" annotation opened in it puts its ops below
   the top level): kept.
3. loader_pids_merged.kineto.json: the trainer's trace merged with those of
   two DataLoader workers that profile themselves (other pids). A worker has
   the most cpu_op time, but the breakdown's CPU "main thread" is the
   trainer's, the thread holding the steps (src/analysis/gaps, CpuMainThreads).

  laststep_test.py --aiprof build/aiprof --data test/data/fresh
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print("FAIL:", what)


def analyze(exe, path):
    out = subprocess.run([exe, "--no-calibrate", "analyze", "--format", "json", path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"aiprof analyze {path} failed: {out.stderr}")
    return json.loads(out.stdout)


def events(trace):
    return [e for e in trace["traceEvents"] if e.get("ph") == "X"]


def step_names(evs, step):
    """Names of the host slices starting inside `step`, at any depth, its
    ProfilerStep marker left out."""
    a, b = step["ts"], step["ts"] + step["dur"]
    return {e["name"] for e in evs if a <= e["ts"] < b and not e["name"].startswith("ProfilerStep#")}


def top_level_names(evs, step):
    """The same, only those with no enclosing slice of their thread other
    than a ProfilerStep marker."""
    a, b = step["ts"], step["ts"] + step["dur"]
    inside = [e for e in evs if a <= e["ts"] < b and not e["name"].startswith("ProfilerStep#")]
    return {e["name"] for e in inside
            if not any(p is not e and p["pid"] == e["pid"] and p["tid"] == e["tid"] and p["ts"] <= e["ts"]
                       and e["ts"] + e["dur"] <= p["ts"] + p["dur"] and (p["dur"], -p["ts"]) > (e["dur"], -e["ts"])
                       for p in inside)}


def metric(m, k):
    return m[k]["value"] if isinstance(m.get(k), dict) else m.get(k)


def test_cut_step(exe, data):
    path = os.path.join(data, "exc_out.kineto.json")
    trace = json.load(open(path))
    evs = events(trace)
    steps = sorted((e for e in evs if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    last, earlier = steps[-1], steps[:-1]
    # The fixture's facts: nothing starts after its last step; it is the
    # shortest; ops every earlier step holds are missing from it.
    check(max(e["ts"] for e in evs) < last["ts"] + last["dur"], "exc_out: the recording ends in the last step")
    check(all(last["dur"] < s["dur"] for s in earlier), "exc_out: the last step is the shortest")
    common = set.intersection(*(step_names(evs, s) for s in earlier))
    missing = sorted(common - step_names(evs, last))
    check("Optimizer.step#SGD.step" in missing, f"exc_out: the last step lacks the optimizer step ({missing})")

    d = analyze(exe, path)
    m = d["metrics"]
    value = lambda k: metric(m, k)
    check(value("impact_steps") == len(earlier), f"exc_out: impact_steps {value('impact_steps')}, want {len(earlier)}")
    check(value("truncated_steps") == 1, f"exc_out: truncated_steps {value('truncated_steps')}, want 1")
    want = sum(s["dur"] for s in earlier) / len(earlier) * 1000
    check(abs(value("impact_base_ns") - want) < 1e-6 * want,
          f"exc_out: impact_base_ns {value('impact_base_ns')}, want {want} (mean of the whole steps)")
    lines = [x for x in json.dumps(d["evidence"]).split('", "') if last["name"] in x]
    check(any("truncated last step" in x and missing[0] in x for x in lines),
          f"exc_out: no evidence line names {last['name']} as truncated, lacking {missing[0]}: {lines}")
    # summary says the same reason (the ops the earlier steps hold).
    text = subprocess.run([exe, "summary", path], capture_output=True, text=True).stdout
    said = [x for x in text.splitlines() if x.startswith(last["name"] + ": the recording ends inside it")]
    check(len(said) == 1 and "before ops every earlier step holds: " in said[0],
          f"exc_out: summary gives the cut step's reason: {said}")

    # The recording goes on after the step: it is whole, every step counts.
    after = dict(evs[-1], name="aten::empty", cat="cpu_op", ts=last["ts"] + last["dur"] + 10, dur=2, args={})
    trace["traceEvents"].append(after)
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "exc_out_after.kineto.json")
        json.dump(trace, open(p, "w"))
        m2 = analyze(exe, p)["metrics"]
    v2 = lambda k: metric(m2, k)
    check(v2("impact_steps") == len(steps), f"exc_out + op after: impact_steps {v2('impact_steps')}, want {len(steps)}")
    check(v2("truncated_steps") is None, f"exc_out + op after: truncated_steps {v2('truncated_steps')}, want none")


def test_whole_last_step(exe, data):
    """midepoch: the schedule starts inside an epoch; the last step, shorter
    than those before it and ending the recording, opens the "epoch 2"
    annotation, so its ops lie below the top level, but it holds every op the
    others do: a whole step, kept."""
    path = os.path.join(data, "midepoch.kineto.json")
    evs = events(json.load(open(path)))
    steps = sorted((e for e in evs if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    last, earlier = steps[-1], steps[:-1]
    check(max(e["ts"] for e in evs) < last["ts"] + last["dur"], "midepoch: the recording ends in the last step")
    check(all(last["dur"] < s["dur"] for s in earlier), "midepoch: the last step is the shortest")
    check(set.intersection(*(step_names(evs, s) for s in earlier)) <= step_names(evs, last),
          "midepoch: the last step holds every op name the earlier steps hold")
    check(set.intersection(*(top_level_names(evs, s) for s in earlier)) - top_level_names(evs, last),
          "midepoch: the last step's top-level names differ (the case this checks)")
    m = analyze(exe, path)["metrics"]
    check(metric(m, "truncated_steps") is None, f"midepoch: truncated_steps {metric(m, 'truncated_steps')}, want none")
    check(metric(m, "impact_steps") == len(steps), f"midepoch: impact_steps {metric(m, 'impact_steps')}, want {len(steps)}")


def union_ns(spans):
    total, end = 0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def test_loader_pids(exe, data):
    path = os.path.join(data, "loader_pids_merged.kineto.json")
    evs = events(json.load(open(path)))
    ops = {}
    for e in evs:
        if e.get("cat") == "cpu_op":
            ops.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    trainer = {(e["pid"], e["tid"]) for e in evs if e["name"].startswith("Optimizer.step#")}
    check(len(trainer) == 1, f"loader_pids: one thread runs the optimizer ({trainer})")
    trainer = next(iter(trainer))
    busiest = max(ops, key=lambda k: union_ns(ops[k]))
    check(busiest != trainer, "loader_pids: a worker is busier than the trainer (the case this checks)")
    want_span = (max(b for a, b in ops[trainer]) - min(a for a, b in ops[trainer])) * 1000
    want_busy = union_ns(ops[trainer]) * 1000
    d = analyze(exe, path)
    rows = [b for b in d["sections"]["breakdown"]["blocks"] if b.get("key") == "timelines"][0]["rows"]
    check(len(rows) == 1, f"loader_pids: one CPU timeline ({len(rows)})")
    row = rows[0]
    check(row["span_ns"] == want_span, f"loader_pids: main thread span {row['span_ns']}, want the trainer's {want_span}")
    check(abs(row["busy"] * row["span_ns"] - want_busy) < 1, f"loader_pids: busy {row['busy']}, want the trainer's")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    test_cut_step(a.aiprof, a.data)
    test_whole_last_step(a.aiprof, a.data)
    test_loader_pids(a.aiprof, a.data)
    print("FAILED" if FAILURES else "OK", len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
