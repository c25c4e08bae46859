#!/usr/bin/env python3
"""Independent oracle for `aiprof summary --format json`.

Plain Python 3 (standard library only). It loads the whole trace with the
json module and recomputes the summary figures from their definitions, so it
shares no code or parsing strategy with aiprof.

Usage:
  summary_oracle.py expect  TRACE              print the oracle summary as JSON
  summary_oracle.py compare TRACE AIPROF_JSON  compare aiprof's JSON output
                                               (a file, or '-' for stdin)
  summary_oracle.py selftest                   check the oracle's own helpers

`compare` exits 0 and prints "OK <n ops> <n devices> <n steps>" (the numbers
aiprof reported) when everything matches, otherwise prints every mismatch
(up to a limit) on stderr and exits 1. Exit code 2 = usage / input error.

Definitions (kept in step with the aiprof spec):
  * Input: Chrome trace JSON, plain or gzip (magic 1f 8b); either
    {"traceEvents": [...], ...} or a bare array.
  * ts/dur: microseconds as int, float or numeric string; converted to integer
    ns from the decimal text, rounding half away from zero. A top-level
    integer "baseTimeNanoseconds" is added to every ts.
  * Slices: ph "X" with usable ts and dur, dur >= 0; plus B/E pairs matched
    per (pid, tid) as a stack in time order (ties by file order). A slice on
    whole microseconds ending at most 1 us after the slice it starts in on
    its (pid, tid) is cut to that slice's end (slice_end_rounded).
  * ops: per (cat or "", name): count, total/mean/p50/p99/max in us;
    percentiles by linear interpolation between closest ranks (numpy default).
  * devices: device-activity slices (cat "kernel" case-insensitively, or
    exactly "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", or Meta MTIA's
    "mtia_ccp_events" other than the event_record/event_wait markers); device = pid,
    rank = top-level distributedInfo.rank or -1; busy = union length,
    span = max end - min start, utilization = busy/span (0 if span 0).
  * steps: slices named "ProfilerStep#..." (without any: "## step N ##" or
    "step N" annotations) not on a device track (a (pid,tid)
    holding a device-activity or gpu_user_annotation slice), sorted by start;
    without either, the steps of an exact periodic pattern of host ops, found
    by brute force (periodic_steps_test.py; the approximate pattern is not
    replicated: a trace that gets one fails here).
  * events_by_category: per cat ("" if absent), slices + instants (ph i/I).
"""

import argparse
import decimal
import gzip
import json
import math
import os
import re
import sys
from fractions import Fraction

# Enough digits that no realistic timestamp text is rounded by the context.
_CTX = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP,
                       Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
_THOUSAND = decimal.Decimal(1000)
_ONE = decimal.Decimal(1)

DEVICE_CATS_EXACT = frozenset(["gpu_memcpy", "Memcpy", "gpu_memset", "Memset"])
GPU_USER_ANNOTATION = "gpu_user_annotation"
STEP_PREFIX = "ProfilerStep#"
STEP_ANNOTATION = re.compile(r"^(## [Ss]tep \d+ ##|[Ss]tep \d+)$")

REL_TOL = 1e-6
ABS_TOL_US = 0.001


# --------------------------------------------------------------------------
# Loading and number conversion
# --------------------------------------------------------------------------

def load_json_bytes(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw


def load_trace(path):
    raw = load_json_bytes(path)
    doc = json.loads(raw, parse_float=decimal.Decimal, parse_int=int)
    if isinstance(doc, list):
        return {}, doc
    if isinstance(doc, dict):
        events = doc.get("traceEvents", [])
        if not isinstance(events, list):
            raise ValueError("traceEvents is not an array")
        return doc, events
    raise ValueError("top level is neither an object nor an array")


def to_decimal(v):
    """Decimal value of a JSON ts/dur, or None when it is not usable."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return decimal.Decimal(v)
    if isinstance(v, decimal.Decimal):
        d = v
    elif isinstance(v, float):  # only if someone parsed without Decimal
        d = decimal.Decimal(repr(v))
    elif isinstance(v, str):
        try:
            d = decimal.Decimal(v.strip())
        except decimal.InvalidOperation:
            return None
    else:
        return None
    if not d.is_finite():
        return None
    return d


def us_to_ns(v):
    """Integer ns from a JSON microsecond value, round half away from zero."""
    d = to_decimal(v)
    if d is None:
        return None
    return int(_CTX.multiply(d, _THOUSAND).quantize(_ONE, rounding=decimal.ROUND_HALF_UP, context=_CTX))


def norm_key(v):
    """Hashable form of a pid/tid (they may be int, str, or worse)."""
    if isinstance(v, (list, dict)):
        return "json:" + json.dumps(v, sort_keys=True, default=str)
    if isinstance(v, decimal.Decimal):
        return "num:" + str(v)
    return v


def cat_of(ev):
    c = ev.get("cat")
    if isinstance(c, str) and c:
        return c
    # torch's legacy export_chrome_trace (no Kineto): no cat, pid "CPU
    # functions"; operators ("::" in the name, autograd nodes "XxxBackward0",
    # "detach") are cpu_op, the other ranges user_annotation
    # (docs/importers.md).
    if ev.get("pid") == "CPU functions":
        n = name_of(ev)
        op = "::" in n or n in ("detach", "detach_") or re.fullmatch(r"[^ #]+Backward[0-9]*", n) is not None
        return "cpu_op" if op else "user_annotation"
    return ""


def name_of(ev):
    n = ev.get("name")
    if n is None:
        return ""
    return n if isinstance(n, str) else str(n)


def is_device_cat(cat, name=""):
    if cat == "mtia_ccp_events":
        return name not in ("event_record", "event_wait")
    return cat.lower() == "kernel" or cat in DEVICE_CATS_EXACT


def device_id(pid):
    if isinstance(pid, int) and not isinstance(pid, bool):
        return pid
    if isinstance(pid, str):
        try:
            return int(pid.strip())
        except ValueError:
            return pid
    return pid


# --------------------------------------------------------------------------
# Slice extraction
# --------------------------------------------------------------------------

class Slice(object):
    __slots__ = ("order", "name", "cat", "pid", "tid", "ts", "dur")

    def __init__(self, order, name, cat, pid, tid, ts, dur):
        self.order = order   # file index of the X or B event
        self.name = name
        self.cat = cat
        self.pid = pid       # raw pid value
        self.tid = tid
        self.ts = ts         # absolute ns
        self.dur = dur       # ns

    @property
    def track(self):
        return (norm_key(self.pid), norm_key(self.tid))


def extract(doc, events):
    base = doc.get("baseTimeNanoseconds") if isinstance(doc, dict) else None
    if not (isinstance(base, int) and not isinstance(base, bool)):
        base = 0

    slices = []
    instants = []         # categories of usable instant events
    be = {}               # track -> list of (ts_ns, file index, ph, event)
    stats = {"ignored_x_no_ts_dur": 0, "ignored_x_negative_dur": 0,
             "unmatched_B": 0, "unmatched_E": 0, "ignored_instant_no_ts": 0,
             "non_object_events": 0}

    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            stats["non_object_events"] += 1
            continue
        ph = ev.get("ph")
        if ph == "X":
            ts = us_to_ns(ev.get("ts"))
            dur = us_to_ns(ev.get("dur"))
            if ts is None or dur is None:
                stats["ignored_x_no_ts_dur"] += 1
                continue
            if dur < 0:
                stats["ignored_x_negative_dur"] += 1
                continue
            slices.append(Slice(i, name_of(ev), cat_of(ev), ev.get("pid"),
                                ev.get("tid"), base + ts, dur))
        elif ph in ("B", "E"):
            ts = us_to_ns(ev.get("ts"))
            if ts is None:
                stats["unmatched_" + ph] += 1
                continue
            key = (norm_key(ev.get("pid")), norm_key(ev.get("tid")))
            be.setdefault(key, []).append((base + ts, i, ph, ev))
        elif ph in ("i", "I"):
            if us_to_ns(ev.get("ts")) is None:
                stats["ignored_instant_no_ts"] += 1
                continue
            instants.append(cat_of(ev))

    for key, lst in be.items():
        lst.sort(key=lambda t: (t[0], t[1]))
        stack = []
        for ts, i, ph, ev in lst:
            if ph == "B":
                stack.append((ts, i, ev))
            elif stack:
                bts, bi, bev = stack.pop()
                slices.append(Slice(bi, name_of(bev), cat_of(bev), bev.get("pid"),
                                    bev.get("tid"), bts, ts - bts))
            else:
                stats["unmatched_E"] += 1
        stats["unmatched_B"] += len(stack)

    nest_rounded(slices)
    slices.sort(key=lambda s: s.order)
    return slices, instants, stats


def nest_rounded(slices):
    """The documented import rule slice_end_rounded: on a track, a slice on
    whole microseconds that ends at most 1 us after the slice it starts in
    (also on whole microseconds) is cut to that slice's end (torch's legacy
    export rounds each start and duration on its own)."""
    by_track = {}
    for s in slices:
        by_track.setdefault(s.track, []).append(s)
    for lst in by_track.values():
        lst.sort(key=lambda s: (s.ts, -s.dur, s.order))
        stack = []  # the open slices, innermost last
        for s in lst:
            while stack and stack[-1].ts + stack[-1].dur <= s.ts:
                stack.pop()
            if stack:
                o = stack[-1]
                o_end, end = o.ts + o.dur, s.ts + s.dur
                if 0 < end - o_end <= 1000 and all(x % 1000 == 0 for x in (o.ts, o_end, s.ts, end)):
                    s.dur = o_end - s.ts
            stack.append(s)


# --------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------

def percentile_ns(sorted_ns, q):
    """numpy 'linear' percentile of integer ns values; q is a Fraction."""
    n = len(sorted_ns)
    pos = q * (n - 1)
    lo = math.floor(pos)
    if lo + 1 >= n:
        return Fraction(sorted_ns[n - 1])
    frac = pos - lo
    return sorted_ns[lo] + (sorted_ns[lo + 1] - sorted_ns[lo]) * frac


def ns_us(x):
    """Float microseconds of an exact ns quantity (int or Fraction)."""
    return float(Fraction(x) / 1000)


def union_length(intervals):
    total = 0
    cur_s = cur_e = None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def periodic_steps(slices, device_tracks):
    """Steps of an exact periodic pattern of host ops, by the brute-force
    search of periodic_steps_test.py (every period, run and phase)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import periodic_steps_test as periodic
    by_thread = {}
    for s in slices:
        if s.track in device_tracks or s.cat.lower() in ("python_function", "trace", GPU_USER_ANNOTATION):
            continue
        by_thread.setdefault(s.track, []).append((s.ts, s.ts + s.dur, s.name))
    found = periodic.expected(by_thread)
    if found is None:
        return []
    return [{"name": "periodic step #%d" % (k + 1), "start_us": ns_us(start), "dur_us": ns_us(dur), "_start_ns": start}
            for k, (start, dur) in enumerate(found["steps"])]


def compute(doc, events):
    slices, instants, stats = extract(doc, events)

    # ops
    groups = {}
    for s in slices:
        groups.setdefault((s.cat, s.name), []).append(s.dur)
    ops = []
    for (cat, name), durs in groups.items():
        durs.sort()
        total = sum(durs)
        ops.append({
            "name": name,
            "category": cat,
            "count": len(durs),
            "total_us": ns_us(total),
            "mean_us": ns_us(Fraction(total, len(durs))),
            "p50_us": ns_us(percentile_ns(durs, Fraction(1, 2))),
            "p99_us": ns_us(percentile_ns(durs, Fraction(99, 100))),
            "max_us": ns_us(durs[-1]),
            "_total_ns": total,
        })
    ops.sort(key=lambda o: (-o["_total_ns"], o["category"], o["name"]))

    # devices
    rank = -1
    di = doc.get("distributedInfo") if isinstance(doc, dict) else None
    if isinstance(di, dict) and "rank" in di:
        r = di["rank"]
        if isinstance(r, int) and not isinstance(r, bool):
            rank = r
        elif isinstance(r, str):
            try:
                rank = int(r)
            except ValueError:
                pass
    dev_iv = {}
    device_tracks = set()
    for s in slices:
        if is_device_cat(s.cat, s.name):
            dev_iv.setdefault(device_id(s.pid), []).append((s.ts, s.ts + s.dur))
            device_tracks.add(s.track)
        elif s.cat == GPU_USER_ANNOTATION:
            device_tracks.add(s.track)
    devices = []
    for dev, ivs in dev_iv.items():
        busy = union_length(ivs)
        span = max(e for _, e in ivs) - min(st for st, _ in ivs)
        devices.append({
            "device": dev,
            "rank": rank,
            "busy_us": ns_us(busy),
            "span_us": ns_us(span),
            "utilization": float(Fraction(busy, span)) if span > 0 else 0.0,
        })
    devices.sort(key=lambda d: (d["rank"], str(type(d["device"])), d["device"]))

    # steps
    step_slices = [s for s in slices
                   if s.name.startswith(STEP_PREFIX) and s.track not in device_tracks]
    if not step_slices:  # step annotations count only without ProfilerStep#N
        step_slices = [s for s in slices
                       if STEP_ANNOTATION.match(s.name) and s.track not in device_tracks]
    step_slices.sort(key=lambda s: (s.ts, s.order))
    steps = [{"name": s.name, "start_us": ns_us(s.ts), "dur_us": ns_us(s.dur),
              "_start_ns": s.ts} for s in step_slices]
    if not steps:  # without markers: an exact periodic pattern of ops (brute force, periodic_steps_test.py)
        steps = periodic_steps(slices, device_tracks)

    # events_by_category
    ebc = {}
    for s in slices:
        ebc[s.cat] = ebc.get(s.cat, 0) + 1
    for c in instants:
        ebc[c] = ebc.get(c, 0) + 1

    return {"ops": ops, "devices": devices, "steps": steps,
            "events_by_category": dict(sorted(ebc.items())),
            "_stats": stats, "_n_events": len(events), "_n_slices": len(slices)}


def public(summary):
    """Strip private (_-prefixed) keys for printing."""
    def clean(x):
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if not k.startswith("_")}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x
    out = clean(summary)
    out["oracle_stats"] = dict(summary["_stats"], events=summary["_n_events"],
                               slices=summary["_n_slices"])
    return out


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------

class Mismatches(object):
    LIMIT = 50

    def __init__(self):
        self.items = []

    def add(self, msg):
        self.items.append(msg)

    def __bool__(self):
        return bool(self.items)


def _num(v):
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, decimal.Decimal):
        return float(v)
    return None


def close(got, want, rel=REL_TOL, abs_us=ABS_TOL_US):
    g = _num(got)
    if g is None or math.isnan(g):
        return False
    return abs(g - want) <= abs_us or abs(g - want) <= rel * abs(want)


def close_abs_time(got, want_ns):
    """Absolute timestamps (~1e15 us): relative tolerance would be meaningless
    (1e-6 of 1.7e15 us is half an hour), so require |got - exact| within
    0.001 us or one double ulp of the exact value (a float can't do better)."""
    if isinstance(got, bool) or got is None:
        return False
    if isinstance(got, (int, decimal.Decimal)):
        g = Fraction(got)
    elif isinstance(got, float):
        if math.isnan(got) or math.isinf(got):
            return False
        g = Fraction(got)
    else:
        return False
    want = Fraction(want_ns, 1000)
    tol = max(Fraction(ABS_TOL_US), Fraction(math.ulp(float(want))))
    return abs(g - want) <= tol


def fmt(v):
    return json.dumps(v, default=str)


def compare(oracle, got):
    mm = Mismatches()
    if not isinstance(got, dict):
        mm.add("aiprof output is not a JSON object")
        return mm, (0, 0, 0)
    for key in ("ops", "devices", "steps", "events_by_category"):
        if key not in got:
            mm.add("aiprof output has no %r key" % key)
    g_ops = got.get("ops", [])
    g_devs = got.get("devices", [])
    g_steps = got.get("steps", [])
    g_ebc = got.get("events_by_category", {})
    for key, val, typ in (("ops", g_ops, list), ("devices", g_devs, list),
                          ("steps", g_steps, list), ("events_by_category", g_ebc, dict)):
        if not isinstance(val, typ):
            mm.add("aiprof %r is a %s, expected %s" % (key, type(val).__name__, typ.__name__))
    if mm:
        return mm, (0, 0, 0)
    counts = (len(g_ops), len(g_devs), len(g_steps))

    # ---- ops
    o_ops = {(o["category"], o["name"]): o for o in oracle["ops"]}
    seen = set()
    for idx, g in enumerate(g_ops):
        if not isinstance(g, dict):
            mm.add("ops[%d] is not an object" % idx)
            continue
        name, cat = g.get("name"), g.get("category")
        key = (cat, name)
        where = "ops[%d] (category=%s name=%s)" % (idx, fmt(cat), fmt(name))
        if key in seen:
            mm.add("%s: duplicate op in aiprof output" % where)
            continue
        seen.add(key)
        o = o_ops.get(key)
        if o is None:
            mm.add("%s: no such (category, name) in the oracle" % where)
            continue
        if g.get("count") != o["count"] or isinstance(g.get("count"), bool):
            mm.add("%s: count %s, oracle %d" % (where, fmt(g.get("count")), o["count"]))
        for f in ("total_us", "mean_us", "p50_us", "p99_us", "max_us"):
            if f not in g:
                mm.add("%s: missing %s" % (where, f))
            elif not close(g[f], o[f]):
                mm.add("%s: %s %s, oracle %r" % (where, f, fmt(g[f]), o[f]))
    if g_ops and oracle["ops"]:
        # aiprof lists the ops as its text table ranks them
        # (docs/summary-schema.md): largest self_us first, the profiler
        # wrappers after them, largest total first; --top N keeps the first N
        # of the ranking, no wrapper. The oracle computes no self time: the
        # order is checked on aiprof's own self_us (its totals are checked
        # above), and a full list must hold every op the oracle has.
        # Device records (summary bands, HCCL sub-tasks: device_record) are
        # listed apart from the ranking as the wrappers are.
        listed = [g for g in g_ops if isinstance(g, dict)]
        apart = lambda g: bool(g.get("profiler_wrapper")) or bool(g.get("device_record"))  # noqa: E731
        kinds = [apart(g) for g in listed]
        if kinds != sorted(kinds):
            mm.add("a profiler wrapper or device record is listed before an op that is neither")
        for key, part in (("self_us", [g for g in listed if not apart(g)]),
                          ("total_us", [g for g in listed if apart(g)])):
            for idx in range(1, len(part)):
                a, b = _num(part[idx - 1].get(key)), _num(part[idx].get(key))
                if a is not None and b is not None and b > a * (1 + 1e-12) + 1e-9:
                    mm.add("%s (%r) listed after %s (%r): not sorted by %s"
                           % (fmt(part[idx].get("name")), b, fmt(part[idx - 1].get("name")), a, key))
        if got.get("ops_limited_by_top") is not None:
            if any(kinds):
                mm.add("--top %s lists a profiler wrapper or device record" % fmt(got.get("ops_limited_by_top")))
        elif len(seen) != len(oracle["ops"]):
            mm.add("every op is listed without --top: %d of the oracle's %d" % (len(seen), len(oracle["ops"])))
    elif oracle["ops"] and not g_ops:
        mm.add("aiprof reports no ops, oracle has %d" % len(oracle["ops"]))
    elif g_ops and not oracle["ops"]:
        mm.add("aiprof reports %d ops, oracle has none" % len(g_ops))

    # ---- devices
    o_devs = {(d["rank"], d["device"]): d for d in oracle["devices"]}
    g_dev_map = {}
    for idx, g in enumerate(g_devs):
        if not isinstance(g, dict):
            mm.add("devices[%d] is not an object" % idx)
            continue
        key = (g.get("rank"), g.get("device"))
        if key in g_dev_map:
            mm.add("devices[%d]: duplicate (rank=%s, device=%s)" % (idx, fmt(key[0]), fmt(key[1])))
        g_dev_map[key] = g
    for key in sorted(set(o_devs) - set(g_dev_map), key=str):
        mm.add("device (rank=%s, device=%s) missing from aiprof output" % (fmt(key[0]), fmt(key[1])))
    for key in sorted(set(g_dev_map) - set(o_devs), key=str):
        mm.add("device (rank=%s, device=%s) in aiprof output but not in the oracle"
               % (fmt(key[0]), fmt(key[1])))
    for key in sorted(set(g_dev_map) & set(o_devs), key=str):
        g, o = g_dev_map[key], o_devs[key]
        where = "device (rank=%s, device=%s)" % (fmt(key[0]), fmt(key[1]))
        for f in ("busy_us", "span_us"):
            if f not in g:
                mm.add("%s: missing %s" % (where, f))
            elif not close(g[f], o[f]):
                mm.add("%s: %s %s, oracle %r" % (where, f, fmt(g[f]), o[f]))
        if "utilization" not in g:
            mm.add("%s: missing utilization" % where)
        elif not close(g["utilization"], o["utilization"], abs_us=1e-9):
            mm.add("%s: utilization %s, oracle %r" % (where, fmt(g["utilization"]), o["utilization"]))

    # ---- steps
    o_steps = oracle["steps"]
    if len(g_steps) != len(o_steps):
        mm.add("steps: aiprof has %d, oracle %d (oracle: %s)"
               % (len(g_steps), len(o_steps), ", ".join(s["name"] for s in o_steps[:20])))
    for idx, (g, o) in enumerate(zip(g_steps, o_steps)):
        if not isinstance(g, dict):
            mm.add("steps[%d] is not an object" % idx)
            continue
        where = "steps[%d] (%s)" % (idx, o["name"])
        if g.get("name") != o["name"]:
            mm.add("%s: name %s, oracle %s" % (where, fmt(g.get("name")), fmt(o["name"])))
        if not close_abs_time(g.get("start_us"), o["_start_ns"]):
            mm.add("%s: start_us %s, oracle %s" % (where, fmt(g.get("start_us")),
                                                   str(Fraction(o["_start_ns"], 1000).__float__())
                                                   + " (exact %s ns)" % o["_start_ns"]))
        if not close(g.get("dur_us"), o["dur_us"]):
            mm.add("%s: dur_us %s, oracle %r" % (where, fmt(g.get("dur_us")), o["dur_us"]))

    # ---- events_by_category
    o_ebc = oracle["events_by_category"]
    for c in sorted(set(o_ebc) | set(g_ebc)):
        gv, ov = g_ebc.get(c), o_ebc.get(c)
        if gv != ov or isinstance(gv, bool):
            mm.add("events_by_category[%s]: aiprof %s, oracle %s" % (fmt(c), fmt(gv), fmt(ov)))

    return mm, counts


# --------------------------------------------------------------------------
# Self test of the helpers (no aiprof involved)
# --------------------------------------------------------------------------

def selftest():
    D = decimal.Decimal
    assert us_to_ns(1) == 1000
    assert us_to_ns(D("0.0005")) == 1          # half away from zero
    assert us_to_ns(D("-0.0005")) == -1
    assert us_to_ns(D("0.00049999")) == 0
    assert us_to_ns("2.5e-3") == 3
    assert us_to_ns(" 12.3456 ") == 12346
    assert us_to_ns(D("1712195495519695.8")) == 1712195495519695800
    assert us_to_ns(D("25.118000000000052")) == 25118
    assert us_to_ns("nan") is None and us_to_ns("x") is None and us_to_ns(True) is None
    assert us_to_ns(None) is None and us_to_ns([1]) is None
    # numpy: np.percentile([1,2,3,4], 50) == 2.5, 99 -> 3.97
    assert percentile_ns([1, 2, 3, 4], Fraction(1, 2)) == Fraction(5, 2)
    assert percentile_ns([1, 2, 3, 4], Fraction(99, 100)) == Fraction(397, 100)
    assert percentile_ns([7], Fraction(99, 100)) == 7
    assert union_length([(0, 10), (5, 15), (20, 30), (30, 31), (2, 3)]) == 26
    doc = {"distributedInfo": {"rank": 3}, "baseTimeNanoseconds": 1000000}
    evs = [
        {"ph": "B", "name": "outer", "cat": "c", "pid": 1, "tid": 1, "ts": 0},
        {"ph": "B", "name": "inner", "cat": "c", "pid": 1, "tid": 1, "ts": "1"},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 2},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 10},
        {"ph": "E", "pid": 1, "tid": 2, "ts": 10},            # unmatched
        {"ph": "X", "name": "k", "cat": "Kernel", "pid": 7, "tid": 9, "ts": 0, "dur": 4},
        {"ph": "X", "name": "k", "cat": "KERNEL", "pid": 7, "tid": 9, "ts": 2, "dur": 4},
        {"ph": "X", "name": "m", "cat": "gpu_memcpy", "pid": 7, "tid": 9, "ts": 8, "dur": 2},
        {"ph": "X", "name": "ProfilerStep#1", "cat": "gpu_user_annotation", "pid": 7,
         "tid": 10, "ts": 0, "dur": 10},
        {"ph": "X", "name": "ProfilerStep#1", "cat": "user_annotation", "pid": 1, "tid": 1,
         "ts": D("0.5"), "dur": 9},
        {"ph": "X", "name": "neg", "pid": 1, "tid": 1, "ts": 0, "dur": -1},
        {"ph": "i", "name": "inst", "pid": 1, "tid": 1, "ts": 3},
        {"ph": "I", "name": "inst", "cat": "c", "pid": 1, "tid": 1, "ts": 3},
    ]
    s = compute(doc, evs)
    ops = {(o["category"], o["name"]): o for o in s["ops"]}
    assert ops[("c", "outer")]["total_us"] == 10.0
    assert ops[("c", "inner")]["total_us"] == 1.0
    assert ("", "neg") not in ops
    assert s["devices"] == [{"device": 7, "rank": 3, "busy_us": 8.0, "span_us": 10.0,
                             "utilization": 0.8}], s["devices"]
    assert [(x["name"], x["_start_ns"]) for x in s["steps"]] == [("ProfilerStep#1", 1000500)]
    assert s["events_by_category"] == {"": 1, "Kernel": 1, "KERNEL": 1, "c": 3,
                                       "gpu_memcpy": 1, "gpu_user_annotation": 1,
                                       "user_annotation": 1}, s["events_by_category"]
    assert s["_stats"]["unmatched_E"] == 1
    # compare() against its own output must pass, and catch a perturbation.
    mine = json.loads(json.dumps(public(s)))
    mm, _ = compare(s, mine)
    assert not mm, mm.items
    mine["ops"][0]["count"] += 1
    mine["steps"][0]["start_us"] += 0.01
    mine["events_by_category"]["c"] = 4
    mm, _ = compare(s, mine)
    assert len(mm.items) == 3, mm.items
    print("selftest OK")


# --------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("expect", help="print the oracle summary JSON")
    p.add_argument("trace")
    p.add_argument("--top", type=int, default=0, help="keep only the top N ops (0 = all)")
    p = sub.add_parser("compare", help="compare aiprof summary JSON with the oracle")
    p.add_argument("trace")
    p.add_argument("aiprof_json", help="aiprof's `summary --format json` output, or - for stdin")
    sub.add_parser("selftest", help="check the oracle's helpers")
    args = ap.parse_args(argv)

    if args.cmd == "selftest":
        selftest()
        return 0

    try:
        doc, events = load_trace(args.trace)
    except (OSError, ValueError) as e:
        print("summary_oracle: cannot read trace %s: %s" % (args.trace, e), file=sys.stderr)
        return 2
    oracle = compute(doc, events)

    if args.cmd == "expect":
        out = public(oracle)
        if args.top > 0:
            out["ops"] = out["ops"][:args.top]
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0

    try:
        if args.aiprof_json == "-":
            text = sys.stdin.buffer.read()
        else:
            text = load_json_bytes(args.aiprof_json)
        got = json.loads(text, parse_float=decimal.Decimal, parse_int=int)
    except (OSError, ValueError) as e:
        print("summary_oracle: cannot read aiprof output %s: %s" % (args.aiprof_json, e),
              file=sys.stderr)
        return 2
    mm, (n_ops, n_devs, n_steps) = compare(oracle, got)
    if mm:
        print("MISMATCH %s vs %s: %d problem(s)" % (args.trace, args.aiprof_json, len(mm.items)),
              file=sys.stderr)
        for m in mm.items[:Mismatches.LIMIT]:
            print("  " + m, file=sys.stderr)
        if len(mm.items) > Mismatches.LIMIT:
            print("  ... and %d more" % (len(mm.items) - Mismatches.LIMIT), file=sys.stderr)
        return 1
    print("OK %d %d %d" % (n_ops, n_devs, n_steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
