#!/usr/bin/env python3
"""The flame graph's self time per frame is `aiprof query`'s self_ns.

For each trace: `aiprof view --flame --format folded` (span nesting) against
the same figure computed from `aiprof query`'s slices table alone: each
slice's stack is the chain of its `parent` column (the innermost open slice
that encloses it, docs/query.md), and the slices of one stack add up their
`self_ns` (each instant of a track goes to the latest started open slice).
So a slice that starts inside another and outlives it (torch's
`## backward ##` opened inside `_record_function_enter_new`) must keep its
whole time under the slice that encloses it.

The flame's frames: slices with a duration on the host thread tracks, the
profiler's own span (`trace_span`) and `gpu_user_annotation` left out (a
left-out slice's self time goes to its nearest kept ancestor); step markers
`ProfilerStep#N` merge into `ProfilerStep#*`; a frame names its thread (its
name, else "thread TID"; "rank R / " first when ranks differ).

Usage: flame_self_test.py AIPROF TRACE... (exits 1 on any difference).
"""
import collections
import json
import re
import subprocess
import sys

LEFT_OUT = {"trace_span", "gpu_user_annotation"}


def query(aiprof, trace, sql):
    out = subprocess.run([aiprof, "query", trace, sql, "--format", "json", "--max-rows", "0"],
                         capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    assert not d["truncated"], (trace, sql)
    return [dict(zip(d["columns"], r)) for r in d["rows"]]


def folded_name(name):
    name = re.sub(r"^ProfilerStep#\d+$", "ProfilerStep#*", name)
    return name.replace(";", "\uff1b").replace("\n", "\u2424").replace("\r", "\u240d")


def expected_folded(aiprof, trace):
    tracks = {t["id"]: t for t in query(aiprof, trace, "select id, kind, tid, tid_label, name, rank from tracks")}
    ranks = {t["rank"] for t in tracks.values() if t["rank"] is not None and t["rank"] >= 0}
    multi_rank = len(ranks) > 1

    def label(t):
        s = t["name"] or ("thread " + (t["tid_label"] or str(t["tid"])))
        if multi_rank and t["rank"] is not None and t["rank"] >= 0:
            s = "rank %d / %s" % (t["rank"], s)
        return s

    slices = query(aiprof, trace, "select id, track, name, kind, dur, parent, self_ns from slices")
    by_id = {s["id"]: s for s in slices}
    kept = lambda s: s["kind"] not in LEFT_OUT and s["dur"] > 0
    path_of = {}

    def path(s):  # the kept slices from the outermost down to s (s kept)
        if s["id"] in path_of:
            return path_of[s["id"]]
        chain = []
        x = s
        while x is not None:
            if kept(x):
                chain.append(folded_name(x["name"]))
            x = by_id.get(x["parent"]) if x["parent"] is not None else None
        p = ";".join(reversed(chain))
        path_of[s["id"]] = p
        return p

    want = collections.Counter()
    for s in slices:
        t = tracks[s["track"]]
        if t["kind"] != "thread" or not s["self_ns"]:
            continue
        x = s
        while x is not None and not kept(x):  # a left-out slice's time goes to its nearest kept ancestor
            x = by_id.get(x["parent"]) if x["parent"] is not None else None
        if x is None:
            continue
        want[folded_name(label(t)) + ";" + path(x)] += s["self_ns"]
    return +want


def flame_folded(aiprof, trace):
    out = subprocess.run([aiprof, "view", "--flame", "--format", "folded", trace],
                         capture_output=True, text=True, check=True).stdout
    got = collections.Counter()
    for line in out.splitlines():
        k, v = line.rsplit(" ", 1)
        got[k] += int(v)
    return +got


def main():
    aiprof, traces = sys.argv[1], sys.argv[2:]
    failed = 0
    for trace in traces:
        want, got = expected_folded(aiprof, trace), flame_folded(aiprof, trace)
        diff = {k: (want.get(k, 0), got.get(k, 0)) for k in set(want) | set(got) if want.get(k, 0) != got.get(k, 0)}
        print("%s: %d stacks, query self %d ns, flame self %d ns, %d stacks differ" %
              (trace, len(want), sum(want.values()), sum(got.values()), len(diff)))
        for k, (w, g) in sorted(diff.items(), key=lambda kv: -abs(kv[1][0] - kv[1][1]))[:5]:
            print("   query %d flame %d  %s" % (w, g, k[-300:]))
        if not want or diff:
            failed += 1
    print("FAIL" if failed else "OK", "%d of %d traces differ" % (failed, len(traces)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
