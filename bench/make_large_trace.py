#!/usr/bin/env python3
"""Build a large Kineto-style Chrome trace by replicating a small real one.

Default source: /work/shared/fixtures/torch-cpu/resnet18_bs1_full.kineto.json
(3 ProfilerSteps with cpu_op / user_annotation / [memory] / python_function
events, shapes, call stacks, flops).

Each replica k = 0..R-1 is a copy of every timed event of the source with
  * ts shifted by k * (span + gap), span = source's last end - first start,
    so replica windows (and their ProfilerSteps) never overlap;
  * "ProfilerStep#N"        -> "ProfilerStep#(N + k*maxStep)";
  * args "External id"      -> id + k*maxExternalId   (0 = none, kept 0);
  * args "Python id" / "Python parent id" -> id + k*maxPythonId (null kept);
  * args "Profiler Event Index" / "Ev Idx" -> idx + k*(maxIdx+1);
  * flow events (ph s/t/f) "id" and args "correlation" -> + k*maxId, with
    maxId the largest of both (Kineto's ac2g flow id is the correlation id,
    so launches and kernels of a GPU source stay paired within a replica).
Addresses, sizes, shapes, stacks, "Python module id" are kept as they are.

Session-wide events are written once, not replicated: metadata (ph "M"), the
cat "Trace" span (its dur stretched to cover all replicas) and global
instants (ph "i", s "g": "Iteration Start", "Record Window End", the latter
moved to the end of the last replica).

Layout follows torch/libkineto's: the source's event sections (cpu_op +
user_annotation by start time, then [memory] instants, then python_function)
are kept, each section holding all replicas in turn, then the session events.
So, like a real file, the file is not globally time-ordered. One event per
line, written streaming (json.dumps per event); memory use is a few tens of MB
whatever the output size.

--compact keeps only the complete events (ph "X": ops, annotations, runtime
calls, kernels, memcpys; ProfilerSteps renumbered as above) with their
cat, name, pid, tid, ts and dur, and the metadata events; args, instants,
flows and the cat "Trace" span are left out. A compact event is about 110
bytes instead of 400-500, and it is written by string formatting, so a
trace of many slices is made and imported quickly: the browser test of
`aiprof serve` zooms and pans 1.3 M slices made this way from
test/data/resnet50_num_workers_0.pt.trace.json.gz (test/serve/).

Usage:
  make_large_trace.py OUT [--mb 600] [--gzip] [--src FILE] [--gap-us 1000] [--replicas N] [--compact]

--mb is the target size of the uncompressed JSON in MiB (2^20 bytes); the
result is at least that big (a few percent above). With --gzip the output is
gzip-compressed (OUT is used as given; add .gz yourself).
"""

import argparse
import gzip
import json
import math
import os
import re
import sys
import time

DEFAULT_SRC = "/work/shared/fixtures/torch-cpu/resnet18_bs1_full.kineto.json"
STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")
MIB = 1 << 20


def is_session_event(ev):
    ph = ev.get("ph")
    if ph == "M":
        return True
    if ph == "X" and ev.get("cat") == "Trace":
        return True
    if ph in ("i", "I") and ev.get("s") == "g":
        return True
    return False


def section_of(ev):
    if ev.get("cat") == "python_function":
        return "python"
    if ev.get("ph") in ("i", "I"):
        return "instant"
    return "ops"


def int_arg(args, key):
    v = args.get(key) if isinstance(args, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


class Source(object):
    def __init__(self, path):
        with open(path, "rb") as f:
            raw = f.read()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        doc = json.loads(raw)
        if isinstance(doc, list):
            doc = {"traceEvents": doc}
        self.doc = doc
        events = doc.get("traceEvents", [])
        self.replicated = []     # events copied per replica, in source order
        self.session = []        # written once
        for ev in events:
            (self.session if is_session_event(ev) else self.replicated).append(ev)

        # Sections: maximal runs of consecutive replicated events of one kind.
        self.sections = []
        for ev in self.replicated:
            s = section_of(ev)
            if not self.sections or self.sections[-1][0] != s:
                self.sections.append((s, []))
            self.sections[-1][1].append(ev)

        starts, ends = [], []
        for ev in events:
            ts = ev.get("ts")
            if isinstance(ts, (int, float)) and not isinstance(ts, bool):
                starts.append(ts)
                d = ev.get("dur")
                ends.append(ts + d if isinstance(d, (int, float)) and not isinstance(d, bool) else ts)
        if not starts:
            raise SystemExit("source has no timestamped events")
        self.t0 = min(starts)
        self.t1 = max(ends)
        self.span = self.t1 - self.t0
        self.int_times = all(isinstance(ev.get("ts"), int) for ev in events if "ts" in ev)

        def max_of(values):
            values = [v for v in values if v is not None]
            return max(values) if values else 0

        self.max_step = max_of(int(m.group(1)) for m in
                               (STEP_RE.match(str(ev.get("name", ""))) for ev in self.replicated) if m)
        self.max_ext = max_of(int_arg(ev.get("args"), "External id") for ev in self.replicated)
        self.max_py = max_of(int_arg(ev.get("args"), k) for ev in self.replicated
                             for k in ("Python id", "Python parent id"))
        self.max_idx = max_of(int_arg(ev.get("args"), k) for ev in events
                              for k in ("Profiler Event Index", "Ev Idx"))
        self.max_flow = max(
            max_of(ev.get("id") if isinstance(ev.get("id"), int) else None
                   for ev in self.replicated if ev.get("ph") in ("s", "t", "f")),
            max_of(int_arg(ev.get("args"), "correlation") for ev in self.replicated))


def replica_event(ev, k, shift, src):
    """A copy of ev for replica k (k = 0 gives an equal copy)."""
    if k == 0:
        return ev
    out = dict(ev)
    ts = out.get("ts")
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        t = ts + k * shift
        out["ts"] = t if isinstance(t, int) else round(t, 3)
    name = out.get("name")
    if isinstance(name, str) and name.startswith("ProfilerStep#"):
        m = STEP_RE.match(name)
        if m:
            out["name"] = "ProfilerStep#%d" % (int(m.group(1)) + k * src.max_step)
    if out.get("ph") in ("s", "t", "f") and isinstance(out.get("id"), int):
        out["id"] = out["id"] + k * src.max_flow
    args = out.get("args")
    if isinstance(args, dict):
        a = None
        for key, inc in (("External id", src.max_ext), ("Python id", src.max_py),
                         ("Python parent id", src.max_py), ("correlation", src.max_flow),
                         ("Profiler Event Index", src.max_idx + 1), ("Ev Idx", src.max_idx + 1)):
            v = args.get(key)
            if isinstance(v, int) and not isinstance(v, bool):
                if key == "External id" and v == 0:
                    continue  # python_function: no correlation
                if a is None:
                    a = dict(args)
                a[key] = v + k * inc
        if a is not None:
            out["args"] = a
    return out


def session_event(ev, replicas, shift):
    """Session events, stretched over all replicas."""
    extra = (replicas - 1) * shift
    if ev.get("ph") == "X" and ev.get("cat") == "Trace" and isinstance(ev.get("dur"), (int, float)):
        out = dict(ev)
        out["dur"] = ev["dur"] + extra
        return out
    if ev.get("ph") in ("i", "I") and ev.get("name") == "Record Window End" \
            and isinstance(ev.get("ts"), (int, float)):
        out = dict(ev)
        out["ts"] = ev["ts"] + extra
        return out
    return ev


def dumps(ev):
    return json.dumps(ev)


def is_compact_kept(ev):
    return ev.get("ph") == "X" and ev.get("cat") != "Trace" and isinstance(ev.get("ts"), (int, float)) \
        and isinstance(ev.get("dur"), (int, float))


def compact_templates(src):
    """Per kept event: (format string with %s for ts, ts, step number or None)."""
    out = []
    for ev in src.replicated:
        if not is_compact_kept(ev):
            continue
        m = STEP_RE.match(str(ev.get("name", "")))
        name = "%s" if m else json.dumps(ev["name"]).replace("%", "%%")
        head = '{"ph": "X", "cat": %s, "name": %s, "pid": %s, "tid": %s, "ts": ' % (
            json.dumps(ev.get("cat", "")).replace("%", "%%"), name,
            json.dumps(ev.get("pid", 0)).replace("%", "%%"), json.dumps(ev.get("tid", 0)).replace("%", "%%"))
        out.append((head + '%s, "dur": ' + json.dumps(ev["dur"]) + "}", ev["ts"], int(m.group(1)) if m else None))
    return out


def write_compact(sink, src, replicas, shift):
    """The compact events of every replica, replica by replica; returns the count."""
    templates = compact_templates(src)
    n = 0
    first = True
    for k in range(replicas):
        d = k * shift
        parts = []
        for fmt, ts, step in templates:
            t = ts + d
            if not isinstance(t, int):
                t = round(t, 3)
            if step is None:
                parts.append(fmt % (t,))
            else:
                parts.append(fmt % (json.dumps("ProfilerStep#%d" % (step + k * src.max_step)), t))
        sink.write(("" if first else ",\n") + ",\n".join(parts))
        first = False
        n += len(parts)
    for ev in src.session:
        if ev.get("ph") == "M":
            sink.write(",\n" + dumps(ev))
            n += 1
    return n


class Sink(object):
    """Buffered writer that counts uncompressed bytes."""

    def __init__(self, path, use_gzip, level):
        self.f = gzip.open(path, "wb", compresslevel=level) if use_gzip else open(path, "wb")
        self.buf = []
        self.buf_len = 0
        self.bytes = 0

    def write(self, s):
        self.buf.append(s)
        self.buf_len += len(s)
        if self.buf_len >= 4 * MIB:
            self.flush()

    def flush(self):
        if self.buf:
            b = "".join(self.buf).encode("utf-8")
            self.f.write(b)
            self.bytes += len(b)
            self.buf = []
            self.buf_len = 0

    def close(self):
        self.flush()
        self.f.close()


def header_and_footer(src, replicas, out_path):
    """Top-level keys of the source around traceEvents, in source order."""
    before, after = [], []
    seen_events = False
    meta = dict(src.doc)
    meta["traceName"] = os.path.basename(out_path)
    note = ("make_large_trace.py: %d replicas of %s (shift %s us per replica)"
            % (replicas, os.path.basename(src.path), src.shift))
    for key in meta:
        if key == "traceEvents":
            seen_events = True
            continue
        (after if seen_events else before).append(key)
    if "traceEvents" not in meta:
        seen_events = True
    head = "{\n"
    for key in before:
        head += "  %s: %s,\n" % (json.dumps(key), json.dumps(meta[key]))
    head += "  %s: %s,\n" % (json.dumps("large_trace_generator"), json.dumps(note))
    head += '  "traceEvents": [\n'
    foot = "\n  ]"
    for key in after:
        foot += ",\n  %s: %s" % (json.dumps(key), json.dumps(meta[key]))
    foot += "\n}\n"
    return head, foot


def replica_bytes(src, k, shift):
    return sum(len(dumps(replica_event(ev, k, shift, src))) + 2 for ev in src.replicated)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Build a large Kineto-style trace by replicating "
                                             "a real one's ProfilerStep windows.")
    ap.add_argument("out", help="output path")
    ap.add_argument("--mb", type=float, default=600, help="target uncompressed size in MiB (default 600)")
    ap.add_argument("--gzip", action="store_true", help="gzip the output")
    ap.add_argument("--gzip-level", type=int, default=6)
    ap.add_argument("--src", default=DEFAULT_SRC, help="source trace (default %(default)s)")
    ap.add_argument("--gap-us", type=int, default=1000, help="idle gap between replicas (us)")
    ap.add_argument("--replicas", type=int, default=0, help="replica count (overrides --mb)")
    ap.add_argument("--compact", action="store_true",
                    help="complete events only, without args (see above)")
    args = ap.parse_args(argv)

    t_start = time.time()
    src = Source(args.src)
    src.path = args.src
    shift = src.span + args.gap_us
    if not src.int_times:
        shift = round(shift, 3)
    src.shift = shift

    if args.replicas > 0:
        replicas = args.replicas
    elif args.compact:
        per = sum(len(fmt) + 12 for fmt, _, _ in compact_templates(src))
        replicas = max(1, int(math.ceil(args.mb * MIB / float(per))))
    else:
        # Replica size grows slightly with k (bigger ids), so sizing from
        # replica 1 never undershoots.
        per = replica_bytes(src, 1, shift)
        session = sum(len(dumps(ev)) + 2 for ev in src.session) + 4096
        replicas = max(1, int(math.ceil((args.mb * MIB - session) / float(per))))

    head, foot = header_and_footer(src, replicas, args.out)
    sink = Sink(args.out, args.gzip, args.gzip_level)
    sink.write(head)
    n = 0
    first = True
    per_replica, session_count = len(src.replicated), len(src.session)
    if args.compact:
        n = write_compact(sink, src, replicas, shift)
        per_replica = len(compact_templates(src))
        session_count = n - per_replica * replicas
        src.sections = []
        src.session = []
    for _, evs in src.sections:
        for k in range(replicas):
            for ev in evs:
                sink.write(("" if first else ",\n") + dumps(replica_event(ev, k, shift, src)))
                first = False
                n += 1
    for ev in src.session:
        sink.write(("" if first else ",\n") + dumps(session_event(ev, replicas, shift)))
        first = False
        n += 1
    sink.write(foot)
    sink.close()

    elapsed = time.time() - t_start
    on_disk = os.path.getsize(args.out)
    steps = src.max_step * replicas
    print("wrote %s: %d events (%d replicas x %d + %d session), %d ProfilerSteps, "
          "%d bytes JSON (%.1f MiB)%s, %.1f s"
          % (args.out, n, replicas, per_replica, session_count, steps,
             sink.bytes, sink.bytes / float(MIB),
             (", %d bytes gzip" % on_disk) if args.gzip else "", elapsed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
