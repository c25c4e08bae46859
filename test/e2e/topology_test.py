#!/usr/bin/env python3
"""aiprof view --topology on real fixtures, edges checked against independent
computations over the source files (plain Python, standard library only):

  * launches (Kineto GPU traces: the AlexNet A100 sample, HTA's two-rank
    sampled_rank-0/1 pair as one folder): per (host pid/tid, device
    pid/tid), the device activities (cat kernel, gpu_memcpy, gpu_memset)
    whose args.correlation equals that of a cuda_runtime / cuda_driver call
    on a host thread: count, Σ device dur, Σ host dur;
  * collectives (the HTA pair): per (rank, stream, "Process Group Name"),
    the NCCL kernels (cat kernel, name containing "nccl"): count, Σ dur;
  * links (torch_npu two-rank folders level1/level0): per (rank, "src-dst")
    in communication_matrix.json, Σ Transit Size / Σ Transit Time over the
    "*-total@*" rows (all rows when a file has none), LOCAL and src == dst
    left out: one link edge each, bandwidth equal;
  * the slow rank highlighted is the one `aiprof analyze` names;
  * the DOT, SVG and HTML outputs agree on nodes and edges, and a hand-made
    trace with hostile names never puts markup into the SVG or the page.
"""
import argparse
import collections
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summary_oracle  # noqa: E402  (exact µs → ns from the decimal text)

FAILURES = []
CHECKS = [0]
HOSTILE = '</script><img src=x onerror=alert(1)>"\\N&amp;'


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, timeout=600)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def topology(exe, src, out):
    rc, _, err = run([exe, "view", src, "--topology", "-o", out])
    check(rc == 0, "view --topology %s exits 0: %s" % (src, err[:300]))
    if rc != 0:
        return None
    html = open(out, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="topology-data">(.*?)</script>', html, re.S)
    check(m is not None, "page holds the graph data")
    return json.loads(m.group(1)), html


def load_events(path):
    doc, events = summary_oracle.load_trace(path)
    rank = doc.get("distributedInfo", {}).get("rank", -1) if isinstance(doc, dict) else -1
    return rank, [e for e in events if isinstance(e, dict)]


def ns(v):
    return summary_oracle.us_to_ns(v)


# --------------------------------------------------------------------------
# Oracles
# --------------------------------------------------------------------------

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
HOST_LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


def launch_oracle(files):
    """{(rank, host pid, host tid, dev pid, dev tid): [count, Σ dev ns, Σ host ns]}"""
    out = collections.defaultdict(lambda: [0, 0, 0])
    for rank, events in files:
        device_tracks = {(e.get("pid"), e.get("tid")) for e in events
                         if e.get("ph") == "X" and e.get("cat") in DEVICE_CATS}
        host = {}
        for e in events:
            corr = e.get("args", {}).get("correlation") if isinstance(e.get("args"), dict) else None
            if e.get("ph") == "X" and e.get("cat") in HOST_LAUNCH_CATS and corr is not None and \
                    (e.get("pid"), e.get("tid")) not in device_tracks:
                host.setdefault(corr, e)
        for e in events:
            corr = e.get("args", {}).get("correlation") if isinstance(e.get("args"), dict) else None
            if e.get("ph") != "X" or e.get("cat") not in DEVICE_CATS or corr not in host:
                continue
            h = host[corr]
            k = (rank, h["pid"], h["tid"], e["pid"], e["tid"])
            out[k][0] += 1
            out[k][1] += ns(e["dur"])
            out[k][2] += ns(h["dur"])
    return dict(out)


def collective_oracle(files):
    """{(rank, pid, tid, group): [count, Σ ns]}"""
    out = collections.defaultdict(lambda: [0, 0])
    for rank, events in files:
        for e in events:
            if e.get("ph") == "X" and e.get("cat") == "kernel" and "nccl" in str(e.get("name", "")).lower():
                group = e.get("args", {}).get("Process Group Name", "")
                k = (rank, e["pid"], e["tid"], group)
                out[k][0] += 1
                out[k][1] += ns(e["dur"])
    return dict(out)


def union_length(iv):
    iv.sort()
    total, start, end = 0, None, None
    for a, b in iv:
        if end is None or a > end:
            if end is not None:
                total += end - start
            start, end = a, b
        else:
            end = max(end, b)
    return total + (end - start if end is not None else 0)


def device_busy_oracle(files):
    """Per rank and per (rank, pid, tid) stream: |∪ device activity|."""
    ranks, streams = {}, {}
    for rank, events in files:
        per_stream = collections.defaultdict(list)
        for e in events:
            if e.get("ph") == "X" and e.get("cat") in DEVICE_CATS:
                a = ns(e["ts"])
                per_stream[(rank, e["pid"], e["tid"])].append((a, a + ns(e["dur"])))
        ranks[rank] = union_length([x for iv in per_stream.values() for x in iv])
        for k, iv in per_stream.items():
            streams[k] = union_length(iv)
    return ranks, streams


def check_sizes(graph, files, label):
    want_ranks, want_streams = device_busy_oracle(files)
    got_streams = {(n["rank"], n["pid"], n["tid"]): n["time_ns"] for n in graph["nodes"] if n["kind"] == "stream"}
    got_streams = {k: v for k, v in got_streams.items() if v}
    check(got_streams == want_streams, label + ": stream sizes are |∪ device activity|: got %s want %s" %
          (sorted(got_streams.items())[:3], sorted(want_streams.items())[:3]))
    got_ranks = {n["rank"]: n["time_ns"] for n in graph["nodes"] if n["kind"] == "rank" and not n["cluster"]}
    if got_ranks:
        check(got_ranks == want_ranks, label + ": rank sizes are |∪ device activity|: got %s want %s" %
              (got_ranks, want_ranks))


def link_oracle(folder):
    """{(rank, src, dst): bandwidth bytes/s} from each rank's communication_matrix.json."""
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "*", "ASCEND_PROFILER_OUTPUT", "communication_matrix.json"))):
        rank = int(re.search(r"rank(\d+)", path).group(1))
        doc = json.load(open(path))
        rows = []
        for step in doc.values():
            for kind in step.values():
                for op, links in kind.items():
                    rows.append((op, links))
        if any("-total@" in op for op, _ in rows):
            rows = [(op, links) for op, links in rows if "-total@" in op]
        size, time = collections.Counter(), collections.Counter()
        transport = {}
        for _, links in rows:
            for link, v in links.items():
                size[link] += v["Transit Size(MB)"] * 1e6
                time[link] += v["Transit Time(ms)"] * 1e6
                transport[link] = v["Transport Type"]
        for link in size:
            src, dst = (int(x) for x in link.split("-"))
            if src == dst or transport[link] == "LOCAL" or time[link] <= 0:
                continue
            out[(rank, src, dst)] = size[link] / (time[link] / 1e9)
    return out


# --------------------------------------------------------------------------
# Reading the graph
# --------------------------------------------------------------------------

def nodes_by_id(graph):
    return {n["id"]: n for n in graph["nodes"]}


def edges_of(graph, kind):
    return [e for e in graph["edges"] if e["kind"] == kind]


def check_launches(graph, files, label):
    want = launch_oracle(files)
    nodes = nodes_by_id(graph)
    got = {}
    for e in edges_of(graph, "launch"):
        a, b = nodes[e["from"]], nodes[e["to"]]
        got[(a["rank"], a["pid"], a["tid"], b["pid"], b["tid"])] = [e["count"], e["time_ns"], e["host_time_ns"]]
    check(want, label + ": the oracle finds launches")
    check(got == want, label + ": launch edges (count, device ns, host ns) equal the oracle's: got %s want %s" %
          (sorted(got.items())[:4], sorted(want.items())[:4]))
    print("%s: %d launch edges, %d launches" % (label, len(got), sum(v[0] for v in got.values())))


def check_collectives(graph, files, label):
    want = collective_oracle(files)
    nodes = nodes_by_id(graph)
    got = {}
    for e in edges_of(graph, "collective"):
        a, g = nodes[e["from"]], nodes[e["to"]]
        group = g["label"][len("group "):] if g["label"].startswith("group ") else ""
        got[(a["rank"], a["pid"], a["tid"], group)] = [e["count"], e["time_ns"]]
    check(want, label + ": the oracle finds collectives")
    check(got == want, label + ": collective edges equal the oracle's: got %s want %s" %
          (sorted(got.items())[:3], sorted(want.items())[:3]))
    print("%s: %d collective edges, %d collectives" % (label, len(got), sum(v[0] for v in got.values())))


def check_links(graph, folder, label):
    want = link_oracle(folder)
    nodes = nodes_by_id(graph)
    if not glob.glob(os.path.join(folder, "*", "ASCEND_PROFILER_OUTPUT", "communication_matrix.json")):
        check(not edges_of(graph, "link"), label + ": no communication_matrix.json, no link edges")
        return
    got = {}
    for e in edges_of(graph, "link"):
        src = int(re.match(r"rank (\d+)", nodes[e["from"]]["label"]).group(1))
        dst = int(re.match(r"rank (\d+)", nodes[e["to"]]["label"]).group(1))
        reporter = int(re.search(r"reported by rank (\d+)", dict(e["details"])["link"]).group(1))
        got[(reporter, src, dst)] = e["bandwidth_bytes_per_second"]
    check(want, label + ": the oracle finds links")
    check(got.keys() == want.keys(), label + ": one link edge per (rank, link): got %s want %s" %
          (sorted(got)[:5], sorted(want)[:5]))
    bad = [k for k in want if k in got and abs(got[k] - want[k]) > 1e-9 * want[k]]
    check(not bad, label + ": link bandwidths equal the oracle's (rel 1e-9): %s" % bad[:3])
    print("%s: %d link edges" % (label, len(got)))


def check_slow_rank(exe, graph, folder, label):
    rc, out, _ = run([exe, "analyze", folder, "--format", "json"])
    check(rc == 0, label + ": analyze runs")
    highlighted = [n for n in graph["nodes"] if n["kind"] == "rank" and n["highlight"] and not n["cluster"]]
    slow = [b["values"]["slowest_rank"]["value"] for b in json.loads(out)["sections"]["communication"]["blocks"]
            if b.get("type") == "values" and "slowest_rank" in b["values"]]
    m = slow[0] if slow and slow[0] is not None else None
    if m is not None:
        check([n["rank"] for n in highlighted] == [m], label + ": the highlighted rank is analyze's slow rank %s" % m)
    else:  # no slow rank named: the longest device busy time
        ranks = [n for n in graph["nodes"] if n["kind"] == "rank" and not n["cluster"] and n["rank"] >= 0 and
                 "not in this trace" not in n["label"]]
        busiest = max(ranks, key=lambda n: n["time_ns"])
        check([n["id"] for n in highlighted] == [busiest["id"]],
              label + ": without a slow rank, the rank with the longest device busy time is highlighted")
    print("%s: highlighted %s (analyze: %s)" % (label, [n["label"] for n in highlighted], m))


def check_formats_agree(exe, src, graph, tmp, label):
    dot, svg = os.path.join(tmp, "t.dot"), os.path.join(tmp, "t.svg")
    check(run([exe, "view", src, "--topology", "-o", dot])[0] == 0, label + ": dot output")
    check(run([exe, "view", src, "--topology", "-o", svg])[0] == 0, label + ": svg output")
    dot_text, svg_text = open(dot).read(), open(svg).read()
    leaves = [n["id"] for n in graph["nodes"] if not n["cluster"]]
    clusters = [n["id"] for n in graph["nodes"] if n["cluster"]]
    check(all(re.search(r'\b%s \[id="%s"' % (i, i), dot_text) for i in leaves), label + ": every node is in the DOT")
    check(len(re.findall(r'<g id="n\d+" class="node"', svg_text)) == len(leaves),
          label + ": the SVG has one node group per node (%d)" % len(leaves))
    check(len(re.findall(r'<g id="n\d+" class="cluster"', svg_text)) == len(clusters),
          label + ": the SVG has one cluster per cluster (%d)" % len(clusters))
    check(len(re.findall(r'<g id="e\d+" class="edge"', svg_text)) == len(graph["edges"]),
          label + ": the SVG has one edge group per edge (%d)" % len(graph["edges"]))


def check_hostile(exe, tmp):
    # Hand-made: a process, thread, op, stage and flow category named to break
    # out of DOT strings, SVG text and the HTML page.
    src = os.path.join(tmp, "hostile.json")
    json.dump({"traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": HOSTILE}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": HOSTILE}},
        {"ph": "X", "name": "stage:" + HOSTILE, "cat": "user_annotation", "ts": 1, "dur": 10, "pid": 1, "tid": 2},
        {"ph": "X", "name": "stage:b", "cat": "user_annotation", "ts": 12, "dur": 10, "pid": 1, "tid": 2},
        {"ph": "X", "name": "w", "ts": 30, "dur": 1, "pid": 1, "tid": 3},
        {"ph": "s", "id": 1, "name": "f", "cat": HOSTILE, "ts": 2, "pid": 1, "tid": 2},
        {"ph": "f", "id": 1, "bp": "e", "name": "f", "cat": HOSTILE, "ts": 30, "pid": 1, "tid": 3},
    ]}, open(src, "w"))
    for ext in ("html", "svg"):
        out = os.path.join(tmp, "hostile." + ext)
        rc, _, err = run([exe, "view", src, "--topology", "-o", out])
        check(rc == 0, "hostile topology %s: %s" % (ext, err[:300]))
        text = open(out, encoding="utf-8").read()
        check("<img" not in text, "hostile %s: no <img> element" % ext)
        check(text.count("<script") == (2 if ext == "html" else 0), "hostile %s: only the page's own scripts" % ext)
        check("onerror=alert(1)" in text, "hostile %s: the name is there, as text" % ext)
    return src


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--sample", required=True)
    a = ap.parse_args()
    exe = a.aiprof
    tmp = tempfile.mkdtemp(prefix="aiprof_topology_")
    try:
        alexnet = os.path.join(a.sample, "alexnet_a100_kineto.json.gz")
        graph, _ = topology(exe, alexnet, os.path.join(tmp, "alexnet.html"))
        check_launches(graph, [load_events(alexnet)], "alexnet")
        check_sizes(graph, [load_events(alexnet)], "alexnet")
        check_formats_agree(exe, alexnet, graph, tmp, "alexnet")

        pair = os.path.join(tmp, "hta_pair")
        os.mkdir(pair)
        k = os.path.join(a.fixtures, "kineto")
        files = []
        for r in (0, 1):
            name = "HolisticTraceAnalysis__tests__data__trace_filter__sampled_rank-%d.json.gz" % r
            os.symlink(os.path.join(k, name), os.path.join(pair, "rank-%d.json.gz" % r))
            rank, events = load_events(os.path.join(k, name))
            files.append((rank if rank != -1 else r, events))
        graph, _ = topology(exe, pair, os.path.join(tmp, "pair.html"))
        check_launches(graph, files, "hta pair")
        check_collectives(graph, files, "hta pair")
        check_sizes(graph, files, "hta pair")
        check_slow_rank(exe, graph, pair, "hta pair")
        check_formats_agree(exe, pair, graph, tmp, "hta pair")

        for level in ("level1", "level0"):
            folder = os.path.join(a.fixtures, "ascend-pt", level)
            graph, _ = topology(exe, folder, os.path.join(tmp, level + ".html"))
            check_links(graph, folder, level)
            check_slow_rank(exe, graph, folder, level)
            check(len(edges_of(graph, "launch")) > 0 and len(edges_of(graph, "collective")) > 0,
                  level + ": launch and collective edges present")
        check_hostile(exe, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d checks, %d failures" % (CHECKS[0], len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
