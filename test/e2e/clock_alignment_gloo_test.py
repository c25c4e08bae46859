#!/usr/bin/python3
"""Clock alignment by collective ends, against this script's own computation.

The gloo recordings (test/data/crash_gloo, test/data/step_offset_gloo) are
torch 1.13 legacy traces: each rank's times count from its own profiler's
start, so the ranks' clocks agree only by chance. This script reads the raw
files itself: per rank its gloo:all_reduce spans and ProfilerStep#N starts
(a collective belongs to the step whose window holds its start), pairs the
i-th of each step across ranks, marks the stalled one (the last every rank
entered, on each at least 1 s and 10x its other collectives' median), judges
the clocks (median end spread over the non-stalled, over the median of their
ranks' durations, at most 25%; the mean let the 4 s timed-out all-reduces
make any spread look small), and, when they disagree, estimates each rank's
offset as the
median over the completed collectives of its end minus the median end
(once more without the ones the aligned clocks show incomplete: a rank left
before the last arrived). It then sums wait (last arrival - own), lateness
(own - first) and transfer (end - last arrival) per rank over the completed
ones on the clocks used, and checks `aiprof analyze --format json` (the
communication section, comm_wait_ratio) and `aiprof cluster analyze`
(clock_offset_ns, aligned_*) against them, to the nanosecond.

Cases: the recordings as they are (no common clock: every one disagrees
raw; survivors_timed_out's and late_past_timeout's aligned ends agree, so
their figures are on the aligned clocks; recorded's do not, 8.0 ms of a
median 26.5 ms collective, so analyze keeps the raw figures and says they
are untrusted, while cluster reports the aligned ones untrusted), and two
derived here in a temporary folder, one rank's times moved 300 ms later
(recorded: the same verdict at any offset; late_past_timeout: its
incomplete collective is seen only once aligned, so the second estimate is
exercised).
Usage: clock_alignment_gloo_test.py AIPROF DATA_DIR (test/data)
"""
import gzip, json, math, os, statistics, subprocess, sys, tempfile

bad = 0


def check(name, got, want):
    global bad
    ok = got == want
    bad += not ok
    print(f"{'ok' if ok else 'FAIL'} {name}: aiprof {got!r}, expected {want!r}")


def llround(x):
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def read_rank(path):
    """(collectives [(start_ns, end_ns, step)] by start, from gloo:all_reduce)."""
    with gzip.open(path, "rt") as h:
        events = json.load(h)
    steps = sorted((round(e["ts"] * 1000), int(e["name"].split("#")[1])) for e in events
                   if e.get("name", "").startswith("ProfilerStep#"))
    out = []
    for e in sorted((e for e in events if e.get("name") == "gloo:all_reduce"), key=lambda e: e["ts"]):
        ts, end = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
        step = -1
        for start, n in steps:
            if start <= ts:
                step = n
        out.append((ts, end, step))
    return out


def read_folder(folder):
    return {int(f.split(".")[0].removeprefix("rank")): read_rank(os.path.join(folder, f))
            for f in sorted(os.listdir(folder)) if f.endswith(".json.gz")}


def pair(ranks):
    """Paired collectives: [{rank: (start, end)}], by step then ordinal."""
    by = {r: {} for r in ranks}
    for r, v in ranks.items():
        for ts, end, step in v:
            by[r].setdefault(step, []).append((ts, end))
    out = []
    for step in sorted(set.intersection(*(set(b) for b in by.values()))):
        if step < 0:
            continue
        n = min(len(by[r][step]) for r in ranks)
        out += [{r: by[r][step][i] for r in ranks} for i in range(n)]
    return out


def stalled(ranks, paired):
    latest = {r: max(ts for ts, _, _ in v) for r, v in ranks.items()}
    usual = {r: statistics.median([e - ts for ts, e, _ in v if ts != latest[r]]) for r, v in ranks.items()}
    return [all(a == latest[r] and e - a >= 1e9 and e - a >= 10 * usual[r] for r, (a, e) in c.items()) for c in paired]


def sums(paired, stall, off):
    """The figures on clocks `off` (subtracted): spread, agreement, complete, per-rank sums."""
    spreads, durs = [], []
    for c, s in zip(paired, stall):
        if s:
            continue
        ends = [e - off[r] for r, (a, e) in c.items()]
        spreads.append(max(ends) - min(ends))
        durs += [e - a for a, e in c.values()]
    spread = int(statistics.median(spreads))
    # Of the median duration, not the mean: the 4 s timed-out all-reduces made any spread look small.
    agree = spread / statistics.median(durs) <= 0.25
    ranks = sorted(paired[0])
    out = {"spread": spread, "agree": agree, "complete": [], "incomplete": 0,
           "wait": dict.fromkeys(ranks, 0), "late": dict.fromkeys(ranks, 0), "transfer": dict.fromkeys(ranks, 0),
           "comm": dict.fromkeys(ranks, 0), "matched": dict.fromkeys(ranks, 0)}
    for c, s in zip(paired, stall):
        arr = {r: a - off[r] for r, (a, e) in c.items()}
        end = {r: e - off[r] for r, (a, e) in c.items()}
        first, last = min(arr.values()), max(arr.values())
        done = not s and not (agree and min(end.values()) < last - spread)
        out["complete"].append(done)
        out["incomplete"] += not s and not done
        if not done:
            continue
        for r in c:
            out["matched"][r] += 1
            out["comm"][r] += c[r][1] - c[r][0]
            out["wait"][r] += last - arr[r]
            out["late"][r] += arr[r] - first
            out["transfer"][r] += max(0, end[r] - last)
    return out


def offsets(paired, use):
    dev = {r: [] for r in paired[0]}
    for c, u in zip(paired, use):
        if not u:
            continue
        base = next(iter(c.values()))[1]
        ends = {r: e - base for r, (a, e) in c.items()}
        m = statistics.median(ends.values())
        for r, x in ends.items():
            dev[r].append(x - m)
    return {r: llround(statistics.median(v)) if v else 0 for r, v in dev.items()}


def expected(folder):
    """(raw sums, aligned sums, offsets, aligned clocks agree); aligned sums and
    offsets are the raw ones and 0 when the raw clocks agree (nothing tried)."""
    ranks = read_folder(folder)
    paired = pair(ranks)
    stall = stalled(ranks, paired)
    zero = dict.fromkeys(ranks, 0)
    raw = sums(paired, stall, zero)
    if raw["agree"]:
        return raw, raw, zero, False
    off = offsets(paired, raw["complete"])
    aligned = sums(paired, stall, off)
    if aligned["incomplete"]:
        off = offsets(paired, aligned["complete"])
        aligned = sums(paired, stall, off)
    return raw, aligned, off, aligned["agree"]


def shifted_copy(src, dst, rank, shift_us):
    """`src` with rank `rank`'s times moved `shift_us` later (a clock offset)."""
    os.makedirs(dst)
    for f in sorted(os.listdir(src)):
        if not f.endswith(".json.gz"):
            continue
        with gzip.open(os.path.join(src, f), "rt") as h:
            events = json.load(h)
        if f == f"rank{rank}.pt.trace.json.gz":
            for e in events:
                if "ts" in e:
                    e["ts"] += shift_us
        with gzip.open(os.path.join(dst, f), "wt") as h:
            json.dump(events, h)


def analyze(aiprof, folder, env):
    got = json.loads(subprocess.run([aiprof, "analyze", "--only", "communication", "--format", "json", folder],
                                    check=True, capture_output=True, text=True, env=env).stdout)
    blocks = got["sections"]["communication"]["blocks"]
    values = next(b["values"] for b in blocks if b.get("type") == "values" and "clocks_agree" in b["values"])
    table = next(b for b in blocks if b.get("key") == "ranks")
    texts = [b["text"] for b in blocks if b.get("type") == "text"]
    return values, {row["rank"]: row for row in table["rows"]}, texts, got["metrics"]


def cluster(aiprof, folder, env, out):
    subprocess.run([aiprof, "cluster", "analyze", folder, "--world-size", "3", "-o", out], check=True,
                   capture_output=True, text=True, env=env)
    with open(os.path.join(out, "cluster.json")) as h:
        return json.load(h)


def check_case(aiprof, name, folder, want, env, tmp):
    """`want`: the script's own verdict, "agree" (raw clocks), "aligned" (the
    aligned clocks agree: figures on them) or "untrusted" (even aligned not)."""
    print(f"== {name}")
    raw, al, off, aligned = expected(folder)
    verdict = "agree" if raw["agree"] else "aligned" if aligned else "untrusted"
    check(f"{name}: the script's own verdict", verdict, want)
    # analyze's figures: on the aligned clocks when they agree, else the raw ones.
    used = al if aligned else raw
    values, rows, texts, metrics = analyze(aiprof, folder, env)
    check(f"{name}: clocks agree", values["clocks_agree"]["value"], used["agree"])
    check(f"{name}: end spread (clocks used)", values["end_spread_p50_ns"]["value"], used["spread"])
    check(f"{name}: incomplete", values["incomplete"]["value"], used["incomplete"])
    check(f"{name}: says aligned", "clock_alignment" in values, aligned)
    caveat = any("This assumes a collective ends at the same moment on every rank" in t for t in texts)
    check(f"{name}: states the assumption", caveat, aligned)
    if aligned:
        check(f"{name}: raw end spread", values.get("raw_end_spread_p50_ns", {}).get("value"), raw["spread"])
        text = values.get("clock_alignment", {}).get("value", "")
        check(f"{name}: names every rank", all(f"rank {r} " in text for r in off), True)
    if verdict == "untrusted":
        check(f"{name}: the spread alignment left", values.get("aligned_end_spread_p50_ns", {}).get("value"),
              al["spread"])
        check(f"{name}: comm_wait_ratio unavailable", "value" in metrics.get("comm_wait_ratio", {}), False)
    for r in sorted(off):
        row = rows[r]
        check(f"{name}: rank {r} matched", row["matched"], used["matched"][r])
        check(f"{name}: rank {r} clock moved by", row.get("clock_shift_ns"), -off[r] if aligned else None)
        check(f"{name}: rank {r} wait", row["wait_ns"], used["wait"][r])
        check(f"{name}: rank {r} lateness", row["lateness_ns"], used["late"][r])
        check(f"{name}: rank {r} transfer", row["transfer_ns"], used["transfer"][r])
    ratio = sum(used["wait"].values()) / sum(used["comm"].values())
    got_ratio = metrics.get("comm_wait_ratio", {}).get("value")
    check(f"{name}: comm_wait_ratio", got_ratio is not None and abs(got_ratio - ratio) < 1e-12, used["agree"])
    # cluster: the same estimator, the same figures; its aligned_* are on the
    # aligned clocks whenever the raw ones disagree, trusted or not.
    c = cluster(aiprof, folder, env, os.path.join(tmp, name + ".cluster"))
    check(f"{name}: cluster aligned", c["clocks"]["aligned"], not raw["agree"])
    check(f"{name}: cluster trusted", c["clocks"]["trusted"], al["agree"])
    for cr in c["ranks"]:
        r = cr["rank"]
        check(f"{name}: cluster rank {r} offset", cr["clock_offset_ns"], off[r])
        check(f"{name}: cluster rank {r} aligned wait", cr["aligned_wait_ns"], al["wait"][r])
        check(f"{name}: cluster rank {r} aligned lateness", cr["aligned_lateness_ns"], al["late"][r])
        check(f"{name}: cluster rank {r} aligned transfer", cr["aligned_transfer_ns"], al["transfer"][r])


def main():
    aiprof, data = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="clock_alignment_")
    env = dict(os.environ, AIPROF_CALIBRATE="0", XDG_CONFIG_HOME=tmp, XDG_DATA_HOME=tmp)
    crash = os.path.join(data, "crash_gloo")
    recorded = os.path.join(data, "step_offset_gloo", "recorded")
    check_case(aiprof, "survivors_timed_out", os.path.join(crash, "survivors_timed_out"), "aligned", env, tmp)
    check_case(aiprof, "late_past_timeout", os.path.join(crash, "late_past_timeout"), "aligned", env, tmp)
    check_case(aiprof, "recorded", recorded, "untrusted", env, tmp)
    shifted_copy(recorded, os.path.join(tmp, "recorded_rank2_300ms"), 2, 300_000)
    check_case(aiprof, "recorded_rank2_300ms", os.path.join(tmp, "recorded_rank2_300ms"), "untrusted", env, tmp)
    late = os.path.join(tmp, "late_past_timeout_rank0_300ms")
    shifted_copy(os.path.join(crash, "late_past_timeout"), late, 0, 300_000)
    check_case(aiprof, "late_past_timeout_rank0_300ms", late, "aligned", env, tmp)
    # The second estimate mattered there: the incomplete collective is seen only on aligned clocks.
    raw, used, off, _ = expected(late)
    ranks = read_folder(late)
    paired = pair(ranks)
    first = offsets(paired, [not s for s in stalled(ranks, paired)])
    check("late_past_timeout_rank0_300ms: incomplete seen only once aligned", (raw["incomplete"], used["incomplete"]),
          (0, 1))
    check("late_past_timeout_rank0_300ms: the second estimate moved an offset", first != off, True)
    print("FAILED" if bad else "all checks passed", f"({bad} failed)" if bad else "")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
