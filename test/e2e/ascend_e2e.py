#!/usr/bin/env python3
"""Ascend fixtures end to end: `aiprof summary --format json` on the real
torch_npu runs (../shared/fixtures/ascend-pt) and on every single file of
../shared/fixtures/ascend, checked against figures computed here straight from
the profiler's own CSV files with Python's csv module:

  - per-kernel totals (device slices of the timeline) = kernel_details.csv;
  - per-op-type totals and counts (op_types)          = op_statistic.csv;
  - step breakdown computed from the timeline         = step_trace_time.csv;
  - a multi-rank folder opens every rank, one rank per track;
  - copies (summary ops, analyze memcpy) = the Ascend Hardware tasks of type
    SDMA_SQE / PCIE_DMA_SQE (msprof-analyze's copy definition), never HCCL's
    own SDMA/Notify tasks, which are the collective's sub-tasks; collectives =
    communication.json's Elapse Time; device busy = the union of compute,
    copy and collective intervals computed here from trace_view.json.

Tolerance: 0.1% relative (0.01 us absolute for values near zero)."""
import argparse
import collections
import csv
import decimal
import json
import os
import shutil
import subprocess
import sys
import tempfile

FAILURES = []
CHECKS = [0]
REL_TOL = 1e-3
ABS_TOL_US = 0.01
DEVICE_CATEGORIES = {"kernel", "hccl", "Memcpy", "npu_sync"}
BREAKDOWN_KEYS = ["Computing", "Communication(Not Overlapped)", "Overlapped", "Communication", "Free", "Stage",
                  "Preparing"]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def close(a, b):
    return abs(a - b) <= max(ABS_TOL_US, REL_TOL * max(abs(a), abs(b)))


def summary(aiprof, path):
    p = subprocess.run([aiprof, "summary", path, "--format", "json", "--top", "0"], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        check(False, "aiprof summary %s exited %d: %s" % (path, p.returncode, p.stderr))
        return None
    return json.loads(p.stdout)


def read_csv(path, skipped=None):
    """Rows with as many fields as the header; others are counted in `skipped`."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    good = [r for r in rows if None not in r and None not in r.values()]
    if skipped is not None:
        skipped.append(len(rows) - len(good))
    return good


def num(text):
    return float(text.strip())


def check_kernels(js, kernel_csv, label):
    """Device slice totals per kernel name equal kernel_details Duration sums."""
    expected = collections.defaultdict(float)
    counts = collections.Counter()
    skipped = []
    rows = read_csv(kernel_csv, skipped)
    if skipped[0]:
        diag = js["diagnostics"].get("bad_op_row", {})
        check(diag.get("count") == skipped[0] and "kernel_details.csv:line " in diag.get("first_at", ""),
              "%s: %d short rows reported as bad_op_row with file and line: %s" % (label, skipped[0], diag))
    for row in rows:
        expected[row["Name"]] += num(row["Duration(us)"])
        counts[row["Name"]] += 1
    got = collections.defaultdict(float)
    got_counts = collections.Counter()
    for op in js["ops"]:
        if op["category"] in DEVICE_CATEGORIES:
            got[op["name"]] += op["total_us"]
            got_counts[op["name"]] += op["count"]
    bad = [n for n in expected if not close(got.get(n, 0.0), expected[n]) or got_counts[n] < counts[n]]
    check(not bad, "%s: kernel totals differ from kernel_details.csv for %d of %d names, e.g. %s" %
          (label, len(bad), len(expected), [(n, got.get(n), expected[n]) for n in bad[:3]]))
    return len(expected)


def check_op_statistic(js, op_stat_csv, rank, label):
    """op_types (device slices grouped by joined type) equal op_statistic.csv."""
    got = {t["type"]: t for t in js["op_types"] if t["rank"] == rank}
    rows = read_csv(op_stat_csv)
    for row in rows:
        t = got.get(row["OP Type"])
        check(t is not None, "%s: op type %s of op_statistic.csv missing from op_types" % (label, row["OP Type"]))
        if t is None:
            continue
        check(t["count"] == int(row["Count"]), "%s: %s count %d != %s" % (label, row["OP Type"], t["count"], row["Count"]))
        check(close(t["total_us"], num(row["Total Time(us)"])),
              "%s: %s total %s != %s" % (label, row["OP Type"], t["total_us"], row["Total Time(us)"]))
    return len(rows)


def check_step_breakdown(js, step_csv, rank, label):
    """The breakdown computed from the timeline equals step_trace_time.csv."""
    timeline = {b["step"]: b for b in js["step_breakdown"] if b["rank"] == rank and b["source"] == "timeline"}
    from_file = {b["step"]: b for b in js["step_breakdown"] if b["rank"] == rank and b["source"] == "step_trace_time.csv"}
    rows = read_csv(step_csv)
    for row in rows:
        step = int(row["Step"])
        for name, source in (("timeline", timeline), ("step_trace_time.csv", from_file)):
            b = source.get(step)
            check(b is not None, "%s: no %s breakdown for step %d" % (label, name, step))
            if b is None:
                continue
            for key in BREAKDOWN_KEYS:
                if key not in row:
                    continue
                check(close(b["values_us"].get(key, -1e18), num(row[key])),
                      "%s: %s %s of step %d is %s, step_trace_time.csv says %s" %
                      (label, name, key, step, b["values_us"].get(key), row[key]))
    return len(rows)


COMPUTE_TASK_TYPES = {"AI_CORE", "AI_VECTOR_CORE", "AI_CPU", "MIX_AIC", "MIX_AIV", "DSA_SQE", "FFTS_PLUS", "Other"}
COPY_TASK_TYPES = {"SDMA_SQE", "PCIE_DMA_SQE"}


def ns(text):
    """Exact µs text (or number) to integer ns, rounded half away from zero as aiprof parses it."""
    return int((decimal.Decimal(str(text)) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def union_ns(intervals):
    total, end = 0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def raw_device_tasks(trace_view):
    """From trace_view.json alone: the program's copies, HCCL's tasks on the
    hardware streams (the connection_id of an HCCL collective, or the stream
    and task id the HCCL Plane threads list, inside the span HCCL gives it),
    the HCCL collectives, the compute tasks and the ProfilerStep spans, as
    (start_ns, end_ns) lists."""
    with open(trace_view) as f:
        events = json.load(f)
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e["name"] == "thread_name"}
    out = collections.defaultdict(list)
    hccl_spans = {}
    hardware = []
    for e in events:
        if e.get("ph") != "X":
            continue
        a = ns(e["ts"])
        b = a + ns(e["dur"])
        proc = procs.get(e["pid"])
        if proc == "HCCL" and "Communication" in threads.get((e["pid"], e["tid"]), ""):
            out["collective"].append((a, b))
            hccl_spans[("connection", e["args"]["connection_id"])] = (a, b)
        elif proc == "HCCL":
            out["hccl_plane"].append((a, b))
            key = (e["args"]["stream id"], e["args"]["task id"])
            lo, hi = hccl_spans.get(key, (a, b))
            hccl_spans[key] = (min(lo, a), max(hi, b))
        elif proc == "Ascend Hardware":
            hardware.append((e, a, b))
        elif proc == "Python" and e["name"].startswith("ProfilerStep#"):
            out["step"].append((a, b))
    for e, a, b in hardware:
        args = e.get("args", {})
        spans = [hccl_spans.get(("connection", args.get("connection_id"))),
                 hccl_spans.get((args.get("Physic Stream Id"), args.get("Task Id")))]
        # Within 1 us: the last SDMA of a collective may end a fraction of a
        # ns after it (level0 rank0: 0.56 ns), the two written as floats.
        joined = any(span and span[0] - 1000 <= a and b <= span[1] + 1000 for span in spans)
        if joined or args.get("Task Type") in ("SDMA", "RDMA"):
            out["hccl_hardware"].append((a, b))
        elif args.get("Task Type") in COPY_TASK_TYPES:
            out["copy"].append((a, b))
        elif args.get("Task Type") in COMPUTE_TASK_TYPES:
            out["compute"].append((a, b))
    return out


def analyze_memcpy(aiprof, path):
    p = subprocess.run([aiprof, "analyze", path, "--only", "memcpy", "--format", "json"], capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        check(False, "aiprof analyze --only memcpy %s exited %d: %s" % (path, p.returncode, p.stderr))
        return None
    return json.loads(p.stdout)


def check_copies_and_communication(aiprof, one, rank_dir, out, label):
    """Copies are the program's SDMA_SQE / PCIE_DMA_SQE tasks only; HCCL's
    tasks are communication; busy time counts nothing twice."""
    raw = raw_device_tasks(os.path.join(out, "trace_view.json"))
    copies = raw["copy"]
    check(raw["hccl_hardware"], "%s: the raw file has HCCL tasks on a hardware stream" % label)
    got = [op for op in one["ops"] if op["category"] == "Memcpy"]
    got_ns = round(sum(op["total_us"] for op in got) * 1000)
    check(sum(op["count"] for op in got) == len(copies) and abs(got_ns - sum(b - a for a, b in copies)) <= len(copies),
          "%s: copies %d / %d ns, trace_view.json's SDMA_SQE/PCIE_DMA_SQE tasks %d / %d ns (names %s)" %
          (label, sum(op["count"] for op in got), got_ns, len(copies), sum(b - a for a, b in copies),
           sorted({op["name"] for op in got})))
    sub = sum(op["count"] for op in one["ops"] if op["category"] == "hccl_task")
    check(sub == len(raw["hccl_plane"]) + len(raw["hccl_hardware"]),
          "%s: %d hccl_task slices, the raw file has %d Plane tasks + %d HCCL tasks on hardware streams" %
          (label, sub, len(raw["hccl_plane"]), len(raw["hccl_hardware"])))
    # analyze's memcpy figures: the same copies, and their share of the step.
    js = analyze_memcpy(aiprof, rank_dir)
    if js is not None:
        rows = [r for b in js["sections"]["memcpy"]["blocks"] if b.get("key") == "directions" for r in b["rows"]]
        total = sum(r["time_ns"] for r in rows)
        check(abs(total - sum(b - a for a, b in copies)) <= len(copies),
              "%s: analyze memcpy %d ns, raw copies %d ns" % (label, total, sum(b - a for a, b in copies)))
        in_steps = sum(max(0, min(b, sb) - max(a, sa)) for a, b in copies for sa, sb in raw["step"])
        step_ns = sum(sb - sa for sa, sb in raw["step"])
        ratio = js["metrics"]["memcpy_step_ratio"]["value"]
        check(close(ratio * 100, in_steps / step_ns * 100),
              "%s: memcpy_step_ratio %s, raw copies inside ProfilerStep %d of %d ns" % (label, ratio, in_steps, step_ns))
    # Collectives: communication.json's total elapse time (the same figure as
    # step_trace_time.csv's Communication in a one-step run).
    comm_json = os.path.join(out, "communication.json")
    if os.path.exists(comm_json):
        with open(comm_json) as f:
            comm = json.load(f)
        elapse_ms = sum(v["collective"]["Total Op Info"]["Communication Time Info"]["Elapse Time(ms)"]
                        for v in comm.values() if "Total Op Info" in v.get("collective", {}))
        got_us = sum(op["total_us"] for op in one["ops"] if op["category"] == "hccl")
        check(close(got_us, elapse_ms * 1000), "%s: collectives %s us, communication.json Elapse Time %s ms" %
              (label, got_us, elapse_ms))
    busy = union_ns(raw["compute"] + copies + raw["collective"])
    got_busy = sum(d["busy_us"] for d in one["devices"])
    check(close(got_busy, busy / 1000.0), "%s: device busy %s us, raw union of compute, copies and collectives %s us" %
          (label, got_busy, busy / 1000.0))
    return len(copies), sub


def check_run(aiprof, run_dir):
    ranks = sorted(d for d in os.listdir(run_dir) if d.endswith("_ascend_pt"))
    js = summary(aiprof, run_dir)
    if js is None:
        return
    got_ranks = sorted(r["rank"] for r in js["ranks"])
    check(got_ranks == list(range(len(ranks))), "%s: ranks %s, expected one per rank folder %s" % (run_dir, got_ranks, ranks))
    check(sorted({s["rank"] for s in js["steps"]}) == got_ranks, "%s: a ProfilerStep per rank" % run_dir)
    check(len(js["devices"]) == len(ranks), "%s: one device per rank: %s" % (run_dir, js["devices"]))
    for rank_dir in ranks:
        rank = int(rank_dir[len("rank"):rank_dir.index("_")])
        out = os.path.join(run_dir, rank_dir, "ASCEND_PROFILER_OUTPUT")
        label = os.path.join(os.path.basename(run_dir), rank_dir)
        one = summary(aiprof, os.path.join(run_dir, rank_dir))
        if one is None:
            continue
        n = check_kernels(one, os.path.join(out, "kernel_details.csv"), label)
        msg = "%s: %d kernel names match kernel_details.csv" % (label, n)
        if os.path.exists(os.path.join(out, "op_statistic.csv")):
            msg += ", %d op types match op_statistic.csv" % check_op_statistic(js, os.path.join(out, "op_statistic.csv"),
                                                                              rank, label)
        msg += ", %d steps match step_trace_time.csv" % check_step_breakdown(js, os.path.join(out, "step_trace_time.csv"),
                                                                           rank, label)
        msg += ", %d copies and %d HCCL sub-tasks match trace_view.json" % check_copies_and_communication(
            aiprof, one, os.path.join(run_dir, rank_dir), out, label)
        print("ok  ", msg)


def flat_folder(tmp, files, prefix):
    """Rebuilds a torch_npu rank folder from the flat copies named by repository path."""
    root = os.path.join(tmp, prefix.replace("__", "_")[-40:].strip("_") + "_ascend_pt")
    out = os.path.join(root, "ASCEND_PROFILER_OUTPUT")
    os.makedirs(out, exist_ok=True)
    for f in files:
        name = os.path.basename(f)[len(prefix):]
        dest = out if name.startswith("ASCEND_PROFILER_OUTPUT__") else root
        shutil.copy(f, os.path.join(dest, name.split("__")[-1]))
    return root


def check_single_files(aiprof, flat_dir, tmp):
    files = sorted(os.path.join(flat_dir, f) for f in os.listdir(flat_dir) if f != "SOURCES.md")
    check(len(files) >= 11, "expected the 11 single Ascend files under %s, found %d" % (flat_dir, len(files)))
    for f in files:
        if not f.endswith("trace_view.json"):
            continue
        js = summary(aiprof, f)
        if js is None:
            continue
        cats = js["events_by_category"]
        check(js["devices"] and cats.get("kernel", 0) > 0,
              "%s: Ascend Hardware tasks become device kernels: %s" % (os.path.basename(f), cats))
        check(cats.get("overlap_analysis", 0) > 0, "%s: Overlap Analysis tracks recognised" % os.path.basename(f))
        check(js["flows"] if "flows" in js else js["totals"]["flows"] > 0, "%s: flows linked" % os.path.basename(f))
        if "msprof-analyze" in f:  # older file: concatenated pids, CANN track
            check(cats.get("cann", 0) > 0, "%s: CANN track recognised by process_name" % os.path.basename(f))
        print("ok   %s: %d device slices, categories %s" % (os.path.basename(f), sum(
            cats.get(c, 0) for c in DEVICE_CATEGORIES), sorted(cats)))
    # Files of one run, rebuilt into a rank folder (kernel_details.csv gives the slices).
    groups = collections.defaultdict(list)
    for f in files:
        base = os.path.basename(f)
        if base.endswith("trace_view.json"):
            continue
        key = base.split("ASCEND_PROFILER_OUTPUT__")[0] if "ASCEND_PROFILER_OUTPUT__" in base else base.rsplit("__", 1)[0] + "__"
        groups[key].append(f)
    for prefix, group in sorted(groups.items()):
        root = flat_folder(tmp, group, prefix)
        js = summary(aiprof, root)
        if js is None:
            continue
        out = os.path.join(root, "ASCEND_PROFILER_OUTPUT")
        n = check_kernels(js, os.path.join(out, "kernel_details.csv"), prefix) if os.path.exists(
            os.path.join(out, "kernel_details.csv")) else 0
        msg = "%s (%d files): %d kernel names match kernel_details.csv" % (prefix, len(group), n)
        if os.path.exists(os.path.join(out, "op_statistic.csv")):
            rank = js["ranks"][0]["rank"] if js["ranks"] else -1
            msg += ", %d op types match op_statistic.csv" % check_op_statistic(js, os.path.join(out, "op_statistic.csv"),
                                                                              rank, prefix)
        print("ok  ", msg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    runs = os.path.join(a.fixtures, "ascend-pt")
    check(os.path.isdir(os.path.join(runs, "level0")) and os.path.isdir(os.path.join(runs, "level1")),
          "the torch_npu runs are at %s" % runs)
    tmp = tempfile.mkdtemp(prefix="aiprof_ascend_")
    try:
        for level in ("level0", "level1"):
            check_run(a.aiprof, os.path.join(runs, level))
        check_single_files(a.aiprof, os.path.join(a.fixtures, "ascend"), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ascend e2e: %d checks, %d failed" % (CHECKS[0], len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
