#!/usr/bin/env python3
"""aiprof export on real fixtures.

Perfetto: the file is decoded by `protoc --decode=perfetto.protos.Trace`
against Perfetto's published perfetto_trace.proto (not aiprof's trimmed
copy), then checked against an independent reading of the source JSON
(summary_oracle.py's loader: ts/dur as exact integer ns from the decimal
text):
  * the multiset of (begin ts, name) of TYPE_SLICE_BEGIN events equals the
    source's slices, and the multiset of TYPE_SLICE_END timestamps equals
    their ends (ts + dur);
  * instants (ph i/I) and counter values ("C" series, "[memory]" totals)
    match the source's counts; flows match the model's count (summary);
  * every track an event names is described, every parent exists, process
    and thread descriptors are consistent, multi-rank traces group under
    "rank N" tracks;
  * per track, BEGIN/END nest properly (the order trace_processor sees after
    its stable sort by timestamp), every interned name is defined on the
    sequence before it is used, and every flow id starts once and ends once.
Chrome JSON: re-imported by aiprof, `summary --format json` is the same as
for the original input (source path aside; Nsight input included, so its
devices come back as they were); hostile names stay JSON-escaped. Every flow
of the model, launch-to-kernel ones included, is an "s"/"f" pair with one id
each (the ResNet50 sample: 9,096 launch flows were written as none).
Perfetto CPU stack samples: the Nsight fixture's PerfSample packets match its
COMPOSITE_EVENTS rows (counted with Python's sqlite3), every callstack and
frame they use is interned before use, and each callstack's frames are the
sample's SAMPLING_CALLCHAINS rows. A process with per-device memory counters
keeps its ProcessDescriptor and ThreadDescriptors (hand-made trace).
"""
import argparse
import collections
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summary_oracle  # noqa: E402

FAILURES = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, timeout=600, **kw)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


# --------------------------------------------------------------------------
# protoc's text format -> nested dicts (every field a list of values)
# --------------------------------------------------------------------------

def parse_text_format(text):
    root = collections.defaultdict(list)
    stack = [root]
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s == "}":
            stack.pop()
        elif s.endswith("{"):
            child = collections.defaultdict(list)
            stack[-1][s[:-1].strip()].append(child)
            stack.append(child)
        else:
            key, _, value = s.partition(": ")
            if value.startswith('"'):
                value = value[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode(
                    "latin-1").decode("utf-8", "replace")
            stack[-1][key].append(value)
    return root


def one(msg, key, default=None):
    v = msg.get(key)
    return v[0] if v else default


def decode_perfetto(path, proto_dir):
    with open(path, "rb") as f:
        rc, out, err = run(["protoc", "--proto_path=" + proto_dir, "--decode=perfetto.protos.Trace",
                            "perfetto_trace.proto"], stdin=f)
    check(rc == 0, "protoc decodes %s with the published proto: %s" % (path, err[:300]))
    return parse_text_format(out.decode("utf-8", "replace"))


# --------------------------------------------------------------------------
# Checks of one decoded Perfetto trace
# --------------------------------------------------------------------------

def walk_perfetto(trace, label):
    """Tracks, events in file order, and structural checks."""
    tracks = {}
    names, cats = {}, {}
    events = []
    seq_cleared = False
    undefined_iids = 0
    for packet in trace["packet"]:
        check(one(packet, "trusted_packet_sequence_id") == "1", label + ": every packet on sequence 1")
        flags = int(one(packet, "sequence_flags", "0"))
        if flags & 1:
            seq_cleared = True
        for interned in packet.get("interned_data", []):
            for n in interned.get("event_names", []):
                names[one(n, "iid")] = one(n, "name", "")
            for c in interned.get("event_categories", []):
                cats[one(c, "iid")] = one(c, "name", "")
        for d in packet.get("track_descriptor", []):
            uuid = one(d, "uuid")
            check(uuid not in tracks, label + ": track uuid %s described once" % uuid)
            tracks[uuid] = d
        for e in packet.get("track_event", []):
            check(seq_cleared and flags & 2, label + ": track events need incremental state, cleared first")
            iid = one(e, "name_iid")
            if iid is not None and iid not in names:
                undefined_iids += 1
            events.append((int(one(packet, "timestamp")), e, names.get(iid, "")))
    check(undefined_iids == 0, label + ": %d events use a name iid not yet interned" % undefined_iids)
    for uuid, d in tracks.items():
        parent = one(d, "parent_uuid")
        check(parent is None or parent in tracks, label + ": parent %s of track %s exists" % (parent, uuid))
    for ts, e, _ in events:
        check(one(e, "track_uuid") in tracks, label + ": event track %s is described" % one(e, "track_uuid"))
    return tracks, events


def check_nesting(events, label):
    by_track = collections.defaultdict(list)
    for order, (ts, e, name) in enumerate(events):
        t = one(e, "type")
        if t in ("TYPE_SLICE_BEGIN", "TYPE_SLICE_END"):
            by_track[one(e, "track_uuid")].append((ts, order, t))
    bad = 0
    for lst in by_track.values():
        lst.sort()  # trace_processor: stable sort by timestamp
        depth = 0
        for ts, _, t in lst:
            depth += 1 if t == "TYPE_SLICE_BEGIN" else -1
            if depth < 0:
                bad += 1
                depth = 0
        bad += depth != 0
    check(bad == 0, label + ": slices nest on every track (%d violations)" % bad)


def check_flows(events, expected_flows, label):
    starts, ends = collections.Counter(), collections.Counter()
    for _, e, _ in events:
        for f in e.get("flow_ids", []):
            starts[f] += 1
        for f in e.get("terminating_flow_ids", []):
            ends[f] += 1
    check(len(starts) == expected_flows, label + ": %d flows, model has %d" % (len(starts), expected_flows))
    check(all(c == 1 for c in starts.values()) and starts.keys() == ends.keys() and
          all(c == 1 for c in ends.values()), label + ": every flow id starts once and ends once")


def expected_counter_values(events):
    n = 0
    for ev in events:
        if not isinstance(ev, dict) or summary_oracle.us_to_ns(ev.get("ts")) is None:
            continue
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        numeric = [v for v in args.values() if isinstance(v, (int, summary_oracle.decimal.Decimal)) and
                   not isinstance(v, bool)]
        if ev.get("ph") == "C":
            n += len(numeric)
        elif ev.get("ph") in ("i", "I") and ev.get("name") == "[memory]":
            n += sum(1 for k in ("Total Allocated", "Total Reserved")
                     if isinstance(args.get(k), (int, summary_oracle.decimal.Decimal)))
    return n


def model_totals(exe, path):
    rc, out, err = run([exe, "summary", path, "--format", "json"])
    check(rc == 0, "summary of %s: %s" % (path, err[:200]))
    return json.loads(out)["totals"] if rc == 0 else {}


def check_perfetto_vs_source(exe, src, tmp, proto_dir):
    label = "perfetto " + os.path.basename(src)
    out = os.path.join(tmp, os.path.basename(src) + ".pftrace")
    rc, _, err = run([exe, "export", src, "--format", "perfetto", "-o", out])
    check(rc == 0, label + ": export exits 0: " + err[:300])
    if rc != 0:
        return
    tracks, events = walk_perfetto(decode_perfetto(out, proto_dir), label)
    check_nesting(events, label)
    doc, src_events = summary_oracle.load_trace(src)
    slices, instants, _ = summary_oracle.extract(doc, src_events)
    want_begin = collections.Counter((s.ts, s.name) for s in slices)
    want_end = collections.Counter(s.ts + s.dur for s in slices)
    got_begin = collections.Counter((ts, name) for ts, e, name in events if one(e, "type") == "TYPE_SLICE_BEGIN")
    got_end = collections.Counter(ts for ts, e, _ in events if one(e, "type") == "TYPE_SLICE_END")
    check(got_begin == want_begin, label + ": %d slice begins (ts, name) as in the source's %d slices; differ: %s" %
          (sum(got_begin.values()), len(slices), list((got_begin - want_begin).items())[:3] +
           list((want_begin - got_begin).items())[:3]))
    check(got_end == want_end, label + ": slice end timestamps are the source's ts + dur")
    n_instants = sum(1 for _, e, _ in events if one(e, "type") == "TYPE_INSTANT")
    check(n_instants == len(instants), label + ": %d instants, source has %d" % (n_instants, len(instants)))
    n_counters = sum(1 for _, e, _ in events if one(e, "type") == "TYPE_COUNTER")
    want_counters = expected_counter_values(src_events)
    check(n_counters == want_counters, label + ": %d counter values, source has %d" % (n_counters, want_counters))
    totals = model_totals(exe, src)
    check_flows(events, totals.get("flows", -1), label)
    print("%s: %d slices, %d instants, %d counter values, %d flows, %d tracks" %
          (label, len(slices), n_instants, n_counters, totals.get("flows", -1), len(tracks)))
    counter_tracks = {one(e, "track_uuid") for _, e, _ in events if one(e, "type") == "TYPE_COUNTER"}
    check(all("counter" in tracks[u] for u in counter_tracks), label + ": counters are on counter tracks")
    # Thread descriptors name the pid of a described process.
    pids = {one(one(d, "process"), "pid") for d in tracks.values() if "process" in d}
    threads = [one(d, "thread") for d in tracks.values() if "thread" in d]
    check(all(one(t, "pid") in pids for t in threads), label + ": every thread's pid has a process track")


def check_perfetto_multirank(exe, folder, tmp, proto_dir, label):
    out = os.path.join(tmp, label + ".pftrace")
    rc, _, err = run([exe, "export", folder, "--format", "perfetto", "-o", out])
    check(rc == 0, label + ": export exits 0: " + err[:300])
    if rc != 0:
        return
    tracks, events = walk_perfetto(decode_perfetto(out, proto_dir), label)
    check_nesting(events, label)
    totals = model_totals(exe, folder)
    n_begin = sum(1 for _, e, _ in events if one(e, "type") == "TYPE_SLICE_BEGIN")
    n_end = sum(1 for _, e, _ in events if one(e, "type") == "TYPE_SLICE_END")
    check(n_begin == totals.get("slices") and n_end == n_begin,
          label + ": %d begins / %d ends, model has %d slices" % (n_begin, n_end, totals.get("slices")))
    n_instants = sum(1 for _, e, _ in events if one(e, "type") == "TYPE_INSTANT")
    check(n_instants == totals.get("instants"), label + ": instants %d vs %d" % (n_instants, totals.get("instants")))
    n_counters = sum(1 for _, e, _ in events if one(e, "type") == "TYPE_COUNTER")
    check(n_counters == totals.get("counter_samples"),
          label + ": counter values %d vs %d" % (n_counters, totals.get("counter_samples")))
    check_flows(events, totals.get("flows", -1), label)
    roots = {u for u, d in tracks.items() if one(d, "parent_uuid") is None}
    rank_roots = sorted(one(tracks[u], "name") for u in roots)
    check(rank_roots == ["rank 0", "rank 1"], label + ": the roots are the two ranks: %s" % rank_roots)
    # Every event's track descends from a rank.
    def root_of(u):
        while one(tracks[u], "parent_uuid") is not None:
            u = one(tracks[u], "parent_uuid")
        return u
    check(all(root_of(one(e, "track_uuid")) in roots for _, e, _ in events), label + ": events sit under a rank")


# --------------------------------------------------------------------------
# Chrome JSON round trip
# --------------------------------------------------------------------------

def summary_json(exe, path):
    rc, out, err = run([exe, "summary", path, "--format", "json", "--top", "0"])
    check(rc == 0, "summary %s: %s" % (path, err[:200]))
    if rc != 0:
        return None
    doc = json.loads(out)
    doc.pop("source", None)
    return doc


def check_chrome_round_trip(exe, src, tmp):
    label = "chrome-json " + os.path.basename(src.rstrip("/"))
    out = os.path.join(tmp, os.path.basename(src.rstrip("/")) + ".json")
    rc, _, err = run([exe, "export", src, "--format", "chrome-json", "-o", out])
    check(rc == 0, label + ": export exits 0: " + err[:300])
    if rc != 0:
        return
    with open(out, "rb") as f:
        exported = json.loads(f.read())  # valid JSON
    before, after = summary_json(exe, src), summary_json(exe, out)
    if before is None or after is None:
        return
    # Host samples leave as the format's "samples" + "stackFrames", which the
    # Chrome JSON importer does not read back (docs/importers.md): checked
    # here by count against the source's summary, and left out of the
    # round-trip comparison below.
    src_samples = (before.pop("host_samples", None) or {}).get("samples", 0)
    after.pop("host_samples", None)
    check(len(exported.get("samples", [])) == src_samples,
          label + ": exported samples %d = the source's host samples %d" % (len(exported.get("samples", [])), src_samples))
    # Diagnostics name the file they were read from: compare kind, count and
    # description, not the place (the re-imported file has another name).
    for d in (before, after):
        for e in (d.get("diagnostics") or {}).values():
            e.pop("first_at", None)
    # slice_end_rounded is a note about the source's rounding, which the
    # import mended (each such child cut to its parent's end): the exported
    # file no longer carries it, so only the source counts it.
    rounded = (before.get("diagnostics") or {}).pop("slice_end_rounded", None)
    check(not (after.get("diagnostics") or {}).get("slice_end_rounded"),
          label + ": the export carries the mended nesting (no slice_end_rounded after re-import; source %s)" %
          (rounded or {}).get("count", 0))
    diffs = [k for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]
    print("%s: summary totals %s" % (label, after.get("totals")))
    check(not diffs, label + ": summary after re-import equals the original's; differs in %s: %s" %
          (diffs, [(before.get(k), after.get(k)) for k in diffs][:1]))


def check_chrome_flows(exe, src, tmp):
    label = "chrome-json flows " + os.path.basename(src)
    out = os.path.join(tmp, os.path.basename(src) + ".flows.json")
    rc, _, err = run([exe, "export", src, "--format", "chrome-json", "-o", out])
    check(rc == 0, label + ": export exits 0: " + err[:300])
    if rc != 0:
        return
    events = json.load(open(out))["traceEvents"]
    starts = collections.Counter(e["id"] for e in events if e.get("ph") == "s")
    ends = collections.Counter(e["id"] for e in events if e.get("ph") == "f")
    want = model_totals(exe, src).get("flows", -1)
    print("%s: %d flow pairs, model has %d" % (label, len(starts), want))
    check(len(starts) == want and want > 0, label + ": %d flow starts, model has %d flows" % (len(starts), want))
    check(starts == ends and all(c == 1 for c in starts.values()), label + ": each flow id starts once and ends once")
    check(all(e.get("bp") == "e" for e in events if e.get("ph") == "f"), label + ": flow ends bind to the enclosing slice")
    if src.endswith(".sqlite"):  # CPU samples with their stacks
        doc = json.load(open(out))
        db = sqlite3.connect("file:%s?mode=ro" % src, uri=True)
        want_samples = db.execute("SELECT COUNT(DISTINCT id) FROM COMPOSITE_EVENTS").fetchone()[0]
        frames = doc.get("stackFrames", {})
        samples = doc.get("samples", [])
        check(len(samples) == want_samples, label + ": %d samples, source has %d" % (len(samples), want_samples))
        check(all(s.get("sf") is None or s["sf"] in frames for s in samples), label + ": every sample's frame exists")
        check(all(f.get("parent") is None or f["parent"] in frames for f in frames.values()),
              label + ": every frame's parent exists")


def check_perfetto_samples(exe, nsys, tmp, proto_dir):
    label = "perfetto samples " + os.path.basename(nsys)
    out = os.path.join(tmp, "nsys.pftrace")
    rc, _, err = run([exe, "export", nsys, "--format", "perfetto", "-o", out])
    check(rc == 0, label + ": export exits 0: " + err[:300])
    if rc != 0:
        return
    db = sqlite3.connect("file:%s?mode=ro" % nsys, uri=True)
    want = db.execute("SELECT COUNT(DISTINCT id) FROM COMPOSITE_EVENTS").fetchone()[0]
    depth = dict(db.execute("SELECT id, COUNT(*) FROM SAMPLING_CALLCHAINS GROUP BY id"))
    starts = {i: ts for i, ts in db.execute("SELECT id, start FROM COMPOSITE_EVENTS")}
    frames, stacks, names = {}, {}, {}
    samples, undefined = [], 0
    for packet in decode_perfetto(out, proto_dir)["packet"]:
        for interned in packet.get("interned_data", []):
            for n in interned.get("function_names", []):
                names[one(n, "iid")] = one(n, "str", "")
            for f in interned.get("frames", []):
                frames[one(f, "iid")] = f
            for c in interned.get("callstacks", []):
                stacks[one(c, "iid")] = c.get("frame_ids", [])
        for p in packet.get("perf_sample", []):
            iid = one(p, "callstack_iid")
            if iid is not None and (iid not in stacks or any(f not in frames for f in stacks[iid])):
                undefined += 1
            samples.append((int(one(packet, "timestamp")), len(stacks.get(iid, []))))
    print("%s: %d samples, source has %d; %d callstacks, %d frames" % (label, len(samples), want, len(stacks), len(frames)))
    check(len(samples) == want and want > 0, label + ": %d PerfSample packets, COMPOSITE_EVENTS has %d" % (len(samples), want))
    check(undefined == 0, label + ": %d samples use a callstack or frame not interned before" % undefined)
    check(all(one(f, "function_name_id") in names for f in frames.values()), label + ": frame names interned")
    # Stack depths: the multiset of callchain lengths per sample time equals the source's.
    want_depths = collections.Counter((starts[i], depth.get(i, 0)) for i in starts)
    got_depths = collections.Counter(samples)
    check(got_depths == want_depths, label + ": (time, stack depth) of the samples are the source's")


def check_counter_process_descriptors(exe, tmp, proto_dir):
    # Hand-made: process 1's thread 2 runs ops and allocates on device 0
    # (PyTorch's [memory] instants become per-device counters). The process
    # and thread descriptors must stay (the counters made the process a device).
    src = os.path.join(tmp, "memory.json")
    mem = {"Device Type": 1, "Device Id": 0, "Addr": 1, "Bytes": 256, "Total Allocated": 256, "Total Reserved": 2048}
    with open(src, "w") as f:
        json.dump({"traceEvents": [
            {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
            {"ph": "X", "name": "aten::add", "cat": "cpu_op", "ts": 10, "dur": 5, "pid": 1, "tid": 2},
            {"ph": "i", "name": "[memory]", "ts": 11, "pid": 1, "tid": 2, "s": "t", "args": mem},
        ]}, f)
    out = os.path.join(tmp, "memory.pftrace")
    rc, _, err = run([exe, "export", src, "--format", "perfetto", "-o", out])
    check(rc == 0, "memory export: " + err[:200])
    if rc != 0:
        return
    tracks, events = walk_perfetto(decode_perfetto(out, proto_dir), "memory")
    processes = [one(d, "process") for d in tracks.values() if "process" in d]
    threads = [one(d, "thread") for d in tracks.values() if "thread" in d]
    counters = [d for d in tracks.values() if "counter" in d]
    check(len(counters) >= 1, "memory: the [memory] totals are counter tracks")
    check([one(p, "pid") for p in processes] == ["1"], "memory: process 1 has its ProcessDescriptor: %s" % processes)
    check([(one(t, "pid"), one(t, "tid")) for t in threads] == [("1", "2")],
          "memory: thread 2 has its ThreadDescriptor: %s" % threads)


def check_hostile(exe, tmp, proto_dir):
    # Hand-made trace: names, categories, args and thread names that try to
    # break out of JSON/HTML.
    hostile = '</script><img src=x onerror=alert(1)>"\\\n\u2028'
    src = os.path.join(tmp, "hostile.json")
    with open(src, "w") as f:
        json.dump({"traceEvents": [
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": hostile}},
            {"ph": "X", "name": hostile, "cat": hostile, "ts": 1, "dur": 5, "pid": 1, "tid": 2,
             "args": {hostile: hostile}},
            {"ph": "X", "name": "partial overlap", "ts": 3, "dur": 5, "pid": 1, "tid": 2},
        ]}, f)
    out = os.path.join(tmp, "hostile.out.json")
    rc, _, err = run([exe, "export", src, "--format", "chrome-json", "-o", out])
    check(rc == 0, "hostile chrome-json export: " + err[:200])
    doc = json.load(open(out))
    names = [e.get("name") for e in doc["traceEvents"] if e.get("ph") == "X"]
    check(hostile in names, "hostile name survives chrome-json byte for byte")
    x = [e for e in doc["traceEvents"] if e.get("name") == hostile][0]
    check(x.get("args", {}).get(hostile) == hostile and x.get("cat") == hostile, "hostile arg and category survive")
    pf = os.path.join(tmp, "hostile.pftrace")
    rc, _, err = run([exe, "export", src, "--format", "perfetto", "-o", pf])
    check(rc == 0, "hostile perfetto export: " + err[:200])
    tracks, events = walk_perfetto(decode_perfetto(pf, proto_dir), "hostile")
    check_nesting(events, "hostile")
    got = sorted(name for _, e, name in events if one(e, "type") == "TYPE_SLICE_BEGIN")
    check(got == sorted([hostile, "partial overlap"]), "hostile names decoded as written: %r" % got)
    # The partially overlapping slice [3, 8) cannot nest in [1, 6): it has its own sibling track.
    lanes = {one(e, "track_uuid") for _, e, _ in events if one(e, "type") == "TYPE_SLICE_BEGIN"}
    check(len(lanes) == 2, "a partial overlap goes to a sibling track")
    overlap = [d for d in tracks.values() if "(overlap 1)" in one(d, "name", "")]
    check(len(overlap) == 1, "the sibling track is named '<thread> (overlap 1)'")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--sample", required=True, help="test/data")
    ap.add_argument("--perfetto-proto-dir", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="aiprof_export_")
    try:
        k = os.path.join(a.fixtures, "kineto")
        for src in [os.path.join(a.sample, "alexnet_a100_kineto.json.gz"),
                    os.path.join(k, "HolisticTraceAnalysis__tests__data__trace_filter__sampled_rank-0.json.gz"),
                    os.path.join(a.fixtures, "torch-cpu", "resnet18_bs1_full.kineto.json")]:
            check_perfetto_vs_source(a.aiprof, src, tmp, a.perfetto_proto_dir)
        check_perfetto_multirank(a.aiprof, os.path.join(a.fixtures, "ascend-pt", "level1"), tmp,
                                 a.perfetto_proto_dir, "ascend-level1")
        for src in [os.path.join(a.sample, "alexnet_a100_kineto.json.gz"),
                    os.path.join(k, "HolisticTraceAnalysis__tests__data__trace_filter__sampled_rank-1.json.gz"),
                    os.path.join(k, "HolisticTraceAnalysis__tests__data__nccl_parser_config__nccl_data.json.gz"),
                    os.path.join(a.fixtures, "torch-cpu", "resnet18_bs1_full.kineto.json"),
                    os.path.join(a.fixtures, "torch-cpu", "mlp_train_bs32.legacy.json"),
                    os.path.join(a.fixtures, "nsys", "perlmutter-cloverleaf-cuda.sqlite")]:
            check_chrome_round_trip(a.aiprof, src, tmp)
        for src in [os.path.join(a.sample, "alexnet_a100_kineto.json.gz"),
                    os.path.join(a.sample, "resnet50_num_workers_0.pt.trace.json.gz"),
                    os.path.join(a.fixtures, "nsys", "perlmutter-cloverleaf-cuda.sqlite")]:
            check_chrome_flows(a.aiprof, src, tmp)
        check_perfetto_samples(a.aiprof, os.path.join(a.fixtures, "nsys", "perlmutter-cloverleaf-cuda.sqlite"), tmp,
                               a.perfetto_proto_dir)
        check_counter_process_descriptors(a.aiprof, tmp, a.perfetto_proto_dir)
        check_hostile(a.aiprof, tmp, a.perfetto_proto_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d checks, %d failures" % (CHECKS[0], len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
