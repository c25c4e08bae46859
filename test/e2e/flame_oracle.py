#!/usr/bin/env python3
"""Independent computation of a flame graph from a Chrome/Kineto trace JSON:
folded stacks (self time in ns per call path) from the nesting of complete
('X') events on each thread, as `aiprof view --flame --format folded` defines
it (docs/views.md): events sorted by (start, longest first); an event's parent
is the innermost open event that encloses it (one that starts inside an event
and outlives it is kept whole under the event that encloses it; the event it
outlived has no time after its start); each instant goes to the latest
started open event (`aiprof query`'s self_ns); the profiler's own 'Trace' span, gpu_user_annotation labels
and zero-length events are left out; ProfilerStep#N become 'ProfilerStep#*'; threads that carry device activity
(kernels, copies, sets: device streams) are not threads.

Usage: flame_oracle.py TRACE.json  -> prints 'thread-key;a;b;c SELF_NS' lines
(the first frame is 'pid/tid', not aiprof's thread label)."""
import gzip
import json
import re
from decimal import Decimal
import sys
from collections import defaultdict

# Categories (compared in lower case) of device activity: a (pid, tid) with
# any of them is a device stream, not a thread.
# Meta MTIA's command-processor events (mtia_ccp_events) run on its device streams.
# CUPTI's sync records (cuda_sync: Context/Stream/Event Sync) are recorded on
# the device; a (pid, tid) of them alone (a context sync has no stream) is a
# device stream too.
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset", "gpu_user_annotation", "mtia_ccp_events",
               "cuda_sync"}


def to_ns(us):
    """Microseconds as written -> integer ns, exactly (a float would round
    epoch-based timestamps: 1.8e18 ns is past 2**53)."""
    return int((Decimal(str(us)) * 1000).to_integral_value())


def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)  # exact: 1.7e15 us with ns digits is past float precision
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def folded(events):
    by_thread = defaultdict(list)
    device = {(str(e.get("pid")), str(e.get("tid"))) for e in events
              if str(e.get("cat", "")).lower() in DEVICE_CATS}
    for e in events:
        if e.get("ph") != "X" or str(e.get("cat", "")).lower() == "trace":
            continue
        if (str(e.get("pid")), str(e.get("tid"))) in device:
            continue
        dur_ns = to_ns(e.get("dur", 0))
        if dur_ns <= 0:
            continue
        ts_ns = to_ns(e["ts"])
        name = e["name"]
        if re.fullmatch(r"ProfilerStep#[0-9]+", name):
            name = "ProfilerStep#*"
        by_thread[(str(e.get("pid")), str(e.get("tid")))].append((ts_ns, -dur_ns, name))
    out = defaultdict(int)
    for key, evs in by_thread.items():
        evs.sort(key=lambda x: (x[0], x[1]))
        # A slice's parent is the innermost open slice that encloses it (one
        # it outlives is not, and has no time after its start); each instant
        # goes to the latest started open slice (aiprof query's self_ns).
        stack = []  # (end_ns, path), nested
        now = None

        def advance(t):
            nonlocal now
            while stack:
                end, path = stack[-1]
                upto = min(end, t)
                if upto > now:
                    out[path] += upto - now
                    now = upto
                if end > t:
                    return
                stack.pop()

        for ts, negdur, name in evs:
            end = ts - negdur
            if now is None:
                now = ts
            advance(ts)
            now = ts
            while stack and stack[-1][0] < end:
                stack.pop()
            parent_path = stack[-1][1] if stack else ("%s/%s" % key,)
            stack.append((end, parent_path + (name,)))
        if now is not None:
            advance(float("inf"))
    return out

def main():
    for path, self_ns in sorted(folded(load_events(sys.argv[1])).items()):
        if self_ns > 0:
            print("%s %d" % (";".join(path), self_ns))


if __name__ == "__main__":
    main()
