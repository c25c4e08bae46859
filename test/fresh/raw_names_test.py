#!/usr/bin/env python3
"""Names written raw by torch 1.13 (test/data/fresh/README.md) are read as written.

The events are read here without a JSON parser, by the writers' own formats:
torch's EventList.export_chrome_trace (one line, a fixed field order) and the
Kineto layout of gen_torch_traces.py's writer. Every X event of the file must
be one slice of `aiprof query` with the same name, start and duration, and
each event whose name JSON would escape is one `unescaped_string`
diagnostic. Before the fix aiprof refused raw_names.legacy.json ("truncated
JSON") and skipped the kineto file's six such events.

usage: raw_names_test.py --aiprof BIN --data test/data/fresh
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

LEGACY = re.compile(r'\{"name": "(.*?)", "ph": "X", "ts": (\d+), "dur": (\d+), "tid": (\d+), '
                    r'"pid": "CPU functions", "args": \{\}\}')
KINETO = re.compile(r'\n  \{\n    "ph": "X", "cat": "(\w+)", "name": "(.*?)", "pid": (\d+), "tid": (\d+),'
                    r'\n    "ts": (\d+), "dur": (\d+),', re.S)


def read_events(path):
    text = open(path, encoding="utf-8").read()
    if os.path.basename(path).endswith(".legacy.json"):
        events = [(n, int(ts) * 1000, int(d) * 1000) for n, ts, d, _ in LEGACY.findall(text)]
    else:
        events = [(n, int(ts) * 1000, int(d) * 1000) for _, n, _, _, ts, d in KINETO.findall(text)]
    # The writer's X events, Kineto's Trace span ("pid": "Spans") aside.
    written = text.count('"ph": "X"') - text.count('"cat": "Trace"')
    return events, written


def query(aiprof, path, sql):
    out = subprocess.run([aiprof, "query", path, sql, "--format", "json", "--max-rows", "0"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("FAIL %s: aiprof query exited %d: %s" % (path, out.returncode, out.stderr.strip()))
    r = json.loads(out.stdout)
    return [dict(zip(r["columns"], row)) for row in r["rows"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    failures = 0
    for name in ("raw_names.legacy.json", "raw_names.kineto_raw.json"):
        path = os.path.join(args.data, name)
        events, written = read_events(path)
        if len(events) != written or written < 100:
            raise SystemExit("FAIL %s: the format reader found %d of %d events" % (name, len(events), written))
        raw = [n for n, _, _ in events if re.search(r'["\\\x00-\x1f]', n)]
        mine = collections.Counter(events)
        rows = query(args.aiprof, path, "SELECT name, ts, dur FROM slices WHERE category IS NOT 'Trace'")
        theirs = collections.Counter((r["name"] or "", r["ts"], r["dur"]) for r in rows)
        diags = {r["kind"]: r["count"] for r in query(args.aiprof, path, "SELECT kind, count FROM diagnostics")}
        problems = []
        if mine != theirs:
            problems.append("slices differ: only in the file %s; only in aiprof %s"
                            % (sorted(mine - theirs)[:4], sorted(theirs - mine)[:4]))
        if diags.get("unescaped_string", 0) != len(raw) or len(raw) != 6:
            problems.append("unescaped_string %s, %d raw names in the file: %r"
                            % (diags.get("unescaped_string"), len(raw), raw))
        if set(diags) - {"unescaped_string"}:
            problems.append("other diagnostics: %s" % diags)
        for p in problems:
            print("FAIL %s: %s" % (name, p))
        failures += len(problems)
        if not problems:
            print("ok %s: %d events, %d raw names (%s)" % (name, len(events), len(raw), ", ".join(raw)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
