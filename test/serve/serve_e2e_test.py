#!/usr/bin/env python3
"""`aiprof serve` end to end: the real server on loopback over real fixtures,
a hand-made trace with hostile names (in its events and its file name), a
broken trace, a symbolic link out of the logdir, parallel uploads, the
upload limit, uploads streamed to disk (memory bounded, nothing left by a
broken-off upload), tokens and the read-only query. Figures are checked against
independent computations over the source JSON (hand-made trace: counted
here; convnet fixture: its ProfilerStep durations).

  serve_e2e_test.py --aiprof build/aiprof --data test/data
"""
import argparse
import gzip
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

FAILURES = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILURES.append(what)


# Loopback only: never through a proxy.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http(port, path, method="GET", body=None, token=None, timeout=60):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=body, method=method)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with OPENER.open(req, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8"), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8"), dict(e.headers)


def start(exe, args):
    p = subprocess.Popen([exe, "serve"] + args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    line = p.stderr.readline()
    while line.startswith("aiprof serve: warning:"):  # e.g. a token file open to others
        line = p.stderr.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not m:
        p.kill()
        raise SystemExit("server did not start: " + line + p.stderr.read())
    threading.Thread(target=p.stderr.read, daemon=True).start()  # keep draining
    return p, int(m.group(1))


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        return p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        return -1


def rows(port, token=None, q=""):
    s, body, _ = http(port, "/api/runs" + ("?q=" + urllib.parse.quote(q) if q else ""), token=token)
    assert s == 200, body
    return json.loads(body)["sections"]["runs"]["blocks"][0]["rows"]


def wait_settled(port, n, token=None, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = rows(port, token)
        if len(r) >= n and all(x["state"] in ("ready", "failed") for x in r):
            return r
        time.sleep(0.1)
    return rows(port, token)


EVIL = ['<script>alert(1)</script>', '"><img src=x onerror=alert(2)>', "a'b\"c&amp;", "line\nbreak", "esc\x1b[31m"]


def evil_trace():
    ev = [{"ph": "X", "name": n, "cat": "cpu_op", "pid": 1, "tid": 1, "ts": i * 100, "dur": 50 + i}
          for i, n in enumerate(EVIL)]
    # A thread instant named like each op (category markup too), inside its op.
    ev += [{"ph": "i", "s": "t", "name": n, "cat": "<b>" + n, "pid": 1, "tid": 1, "ts": i * 100 + 10}
           for i, n in enumerate(EVIL)]
    return {"traceEvents": ev}


def tiny_trace(tag, n):
    ev = [{"ph": "X", "name": "op_" + tag, "cat": "cpu_op", "pid": 1, "tid": 1, "ts": i * 10, "dur": 5} for i in range(n)]
    return json.dumps({"traceEvents": ev}).encode()


def peak_rss_bytes(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return -1


def raw_post(port, path, head_extra, parts, close_early=False, host="127.0.0.1", method="POST"):
    """POST over a raw socket: the body as given pieces (bytes), so the test
    controls what is sent (a broken-off or chunked body). Returns the status
    line, or "" when the server closed without one."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    try:
        s.sendall(("%s %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (method, path, host, head_extra)).encode())
        for part in parts:
            s.sendall(part)
        if close_early:
            return ""
        answer = b""
        while b"\r\n" not in answer:
            got = s.recv(4096)
            if not got:
                break
            answer += got
        return answer.split(b"\r\n")[0].decode()
    except (BrokenPipeError, ConnectionResetError):
        return "closed"
    finally:
        s.close()


def streamed_upload_tests(exe, tmp):
    """Uploads go to disk as they arrive: parallel uploads do not grow the
    server's memory by their size (held in memory, 4 x 16 MiB grew its peak
    RSS by 74 MB; streamed, by about 1 MB), and a broken-off or over-limit
    upload leaves no file behind."""
    logdir = os.path.join(tmp, "stream")
    os.makedirs(logdir)
    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--max-upload-mb", "20", "--request-threads", "4"])
    uploads = os.path.join(logdir, "uploads")
    try:
        before = peak_rss_bytes(p.pid)
        body = b"x" * (16 << 20)  # not a trace: each run fails at its first byte
        answers = {}

        def upload(i):
            answers[i] = raw_post(port, "/api/runs?name=junk%d.json" % i, "Content-Length: %d\r\n" % len(body),
                                  [body[k:k + (1 << 20)] for k in range(0, len(body), 1 << 20)])

        threads = [threading.Thread(target=upload, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        check(sorted(answers.values()) == ["HTTP/1.1 202 Accepted"] * 4, "4 parallel 16 MiB uploads: %r" % answers)
        runs = wait_settled(port, 4)
        growth = peak_rss_bytes(p.pid) - before
        check(0 <= growth < (32 << 20),
              "4 parallel 16 MiB uploads grow the server's peak RSS by %.1f MB (< 32 MiB: bodies go to disk)" % (growth / 1e6))
        check(len(runs) == 4 and all(r["state"] == "failed" and r["error"] for r in runs),
              "the junk uploads are runs that failed with the importer's message")
        sizes = sorted(os.path.getsize(os.path.join(uploads, f)) for f in os.listdir(uploads))
        check(sizes == [len(body)] * 4, "each upload stored whole: %r" % sizes)
        # Broken off after 1 MiB of 8: no run, no file left.
        raw_post(port, "/api/runs?name=cut.json", "Content-Length: %d\r\n" % (8 << 20), [b"x" * (1 << 20)],
                 close_early=True)
        # Chunked past the limit: 413 while it streams, no file left.
        chunk = b"%x\r\n" % (1 << 20) + b"x" * (1 << 20) + b"\r\n"
        status = raw_post(port, "/api/runs?name=huge.json", "Transfer-Encoding: chunked\r\n", [chunk] * 24)
        check(status in ("HTTP/1.1 413 Payload Too Large", "closed"), "a chunked upload past the limit: " + status)
        # Chunked within the limit: stored whole, decoded.
        trace = tiny_trace("chunked", 3)
        pieces = [trace[k:k + 7] for k in range(0, len(trace), 7)]
        status = raw_post(port, "/api/runs?name=chunked.json", "Transfer-Encoding: chunked\r\n",
                          [b"%x\r\n%s\r\n" % (len(x), x) for x in pieces] + [b"0\r\n\r\n"])
        check(status == "HTTP/1.1 202 Accepted", "a chunked upload within the limit is accepted: " + status)
        deadline = time.time() + 10
        while time.time() < deadline and any(f.startswith(".") for f in os.listdir(uploads)):
            time.sleep(0.1)
        left = sorted(f for f in os.listdir(uploads) if f.startswith("."))
        check(left == [], "no partial file left by a broken-off or refused upload: %r" % left)
        runs = wait_settled(port, 5)
        chunked = [x for x in runs if x["path"].endswith("chunked.json")]
        check(len(runs) == 5 and len(chunked) == 1 and chunked[0]["state"] == "ready",
              "the chunked upload is a ready run; the broken-off and refused ones made none")
        if chunked:
            s, body, _ = http(port, "/api/runs/%d/query?sql=%s" % (chunked[0]["id"], urllib.parse.quote(
                "SELECT name, count(*) FROM slices GROUP BY name")))
            check(s == 200 and json.loads(body)["rows"] == [["op_chunked", 3]], "the chunked body decoded: " + body[:200])
        # What a page of another site can send through the user's browser:
        # a simple cross-origin POST (no preflight), and, by DNS rebinding,
        # requests with its own name in Host. Refused; no run is added.
        csrf = raw_post(port, "/api/runs?name=csrf.json", "Origin: http://evil.example\r\nContent-Type: text/plain\r\n"
                        "Content-Length: %d\r\n" % len(trace), [trace])
        check(csrf == "HTTP/1.1 403 Forbidden", "a cross-origin upload is refused: " + csrf)
        fetch = raw_post(port, "/api/rescan", "Sec-Fetch-Site: cross-site\r\nContent-Length: 0\r\n", [])
        check(fetch == "HTTP/1.1 403 Forbidden", "a cross-site rescan is refused: " + fetch)
        rebound = raw_post(port, "/api/runs", "", [], host="attacker.example:%d" % port, method="GET")
        check(rebound == "HTTP/1.1 421 Misdirected Request", "a Host that is not loopback is refused: " + rebound)
        own = raw_post(port, "/api/runs", "", [], host="localhost:%d" % port, method="GET")
        check(own == "HTTP/1.1 200 OK", "localhost in Host is this listener: " + own)
        nul = raw_post(port, "/api/runs?name=%00evil.json", "Content-Length: %d\r\n" % len(trace), [trace])
        check(nul.startswith("HTTP/1.1 400"), "a run name with a NUL byte is refused: " + nul)
        check(len(rows(port)) == 5, "no run added by the refused requests")
    finally:
        check(stop(p) == 0, "server stops cleanly on SIGTERM")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    exe = os.path.abspath(a.aiprof)
    tmp = tempfile.mkdtemp(prefix="aiprof_serve_")
    try:
        run_tests(exe, a.data, a.fixtures, tmp)
        streamed_upload_tests(exe, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    print("all checks passed")
    return 0


def run_tests(exe, data, fixtures, tmp):
    logdir = os.path.join(tmp, "logs")
    os.makedirs(os.path.join(logdir, "team a"))
    convnet = os.path.join(data, "convnet_bs8_channels_last.kineto.json")
    shutil.copy(convnet, os.path.join(logdir, "team a", "convnet.json"))
    shutil.copy(os.path.join(data, "resnet50_num_workers_0.pt.trace.json.gz"), logdir)
    evil_name = 'evil<b>"x\'&.json'
    json.dump(evil_trace(), open(os.path.join(logdir, evil_name), "w"))
    open(os.path.join(logdir, "broken.json"), "w").write('{"traceEvents": [{"ph": "X", "na')
    outside = os.path.join(tmp, "outside.json")
    json.dump(evil_trace(), open(outside, "w"))
    os.symlink(outside, os.path.join(logdir, "link.json"))
    open(os.path.join(logdir, "notes.txt"), "w").write("not a trace")
    # A folder of two torch_npu ranks: one run, not one per file inside.
    shutil.copytree(os.path.join(fixtures, "ascend-pt", "level0"), os.path.join(logdir, "cluster job"))
    # A CUDA-graph replay beside its capture_traces/ (TraceLens's layout):
    # one run with the captured ops, not the replay, the capture and the
    # capture list (not a trace) as three runs.
    vllm = os.path.join(logdir, "vllm decode")
    os.makedirs(os.path.join(vllm, "capture_traces"))
    tl = os.path.join(fixtures, "tracelens", "inference__vllm_decode_full__")
    shutil.copy(tl + "graph_execution.json.gz", os.path.join(vllm, "graph_execution.json.gz"))
    shutil.copy(tl + "capture_traces__execution_details.json",
                os.path.join(vllm, "capture_traces", "execution_details.json"))
    shutil.copy(tl + "capture_traces__graph_capture_rank_0.1773709742341309550.pt.trace.json.gz",
                os.path.join(vllm, "capture_traces", "graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"))

    # Beyond loopback without tokens: refused before anything starts.
    r = subprocess.run([exe, "serve", "--logdir", logdir, "--listen", "0.0.0.0:0"], capture_output=True, text=True,
                       timeout=20)
    check(r.returncode == 2 and "--token-file" in r.stderr,
          "non-loopback without --token-file is a bad command line (exit 2): %d" % r.returncode)

    # History: a baseline and one validation against it, stored by the CLI.
    baselines = os.path.join(tmp, "baselines.db")
    service = "svc <b>x</b>"
    subprocess.run([exe, "set-baseline", "--service", service, "--trace", convnet, "--db", baselines], check=True,
                   capture_output=True)
    # The stored summary is `aiprof summary --format json` of the trace, byte
    # for byte (docs/validation.md): a trace with device activity lacked its
    # op_coverage before (the ResNet50 trace, in a database of its own).
    gpu_db = os.path.join(tmp, "baselines_gpu.db")
    resnet = os.path.join(data, "resnet50_num_workers_0.pt.trace.json.gz")
    subprocess.run([exe, "set-baseline", "--service", "gpu", "--trace", resnet, "--db", gpu_db], check=True,
                   capture_output=True)
    for db, trace in ((baselines, convnet), (gpu_db, resnet)):
        stored = sqlite3.connect(db).execute("SELECT summary_json FROM baselines").fetchone()[0]
        printed = subprocess.run([exe, "summary", trace, "--format", "json"], check=True, capture_output=True,
                                 text=True).stdout
        check(stored == printed, "set-baseline stores the summary aiprof summary --format json prints (%s: %d vs %d "
              "bytes)" % (os.path.basename(trace), len(stored), len(printed)))
    subprocess.run([exe, "validate", "--baseline", service, "--after",
                    os.path.join(data, "resnet50_num_workers_0.pt.trace.json.gz"), "--db", baselines, "--format", "json"],
                   check=True, capture_output=True)
    subprocess.run([exe, "validate", "--baseline", service, "--after", convnet, "--db", baselines, "--format", "json"],
                   check=True, capture_output=True)

    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--max-upload-mb", "1", "--request-threads", "4", "--baselines", baselines])
    try:
        runs = wait_settled(port, 5)
        by_path = {x["path"]: x for x in runs}
        check(sorted(by_path) == sorted(["team a/convnet.json", "resnet50_num_workers_0.pt.trace.json.gz", evil_name,
                                         "broken.json", "cluster job", "vllm decode"]),
              "indexes the traces, the rank folder and the graph-capture folder as one run each, not the link or "
              "notes: %s" % sorted(by_path))
        graphs = by_path.get("vllm decode", {})
        s, body, _ = http(port, "/api/runs/%d/query?sql=%s" % (graphs.get("id", 0), urllib.parse.quote(
            "SELECT count(*) FROM slices WHERE name LIKE 'aten::%'")))
        check(graphs.get("state") == "ready" and s == 200 and json.loads(body)["rows"][0][0] > 0,
              "the graph-capture folder is one run with the ops that captured the graphs: %s %s" %
              (graphs.get("state"), body.strip()[:200]))
        job = by_path.get("cluster job", {})
        s, body, _ = http(port, "/api/runs/%d/query?sql=%s" % (job.get("id", 0), urllib.parse.quote(
            "SELECT count(DISTINCT rank) FROM tracks WHERE rank >= 0")))
        check(job.get("state") == "ready" and s == 200 and json.loads(body)["rows"] == [[2]],
              "the rank folder is one run with both ranks: %s" % body.strip())
        broken = by_path.get("broken.json", {})
        check(broken.get("state") == "failed" and "truncated JSON" in broken.get("error", "")
              and tmp not in broken.get("error", ""), "a bad trace fails with the importer's message, relative path")
        conv = by_path.get("team a/convnet.json", {})
        # Independent: the ProfilerStep slices of the source JSON.
        src = json.load(open(convnet))
        steps = sorted(e["dur"] * 1000 for e in src["traceEvents"]
                       if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))
        check(conv.get("state") == "ready" and conv.get("steps") in (len(steps), len(steps) - 1),
              "convnet step count %s vs %d ProfilerStep slices" % (conv.get("steps"), len(steps)))
        median = statistics.median(steps)
        check(abs(conv.get("step_p50_ns", 0) - median) <= 1000,
              "median step %s ns within 1 us of the source's (%s)" % (conv.get("step_p50_ns"), median))
        check(0 < (conv.get("device_util") or 0) <= 1, "device utilisation is a share")
        evil = by_path.get(evil_name, {})
        check(evil.get("state") == "ready", "the hostile-named trace is ready")

        # A run's page is stored at conversion (cache/<id>.run): served
        # without analysing, it equals the page computed when the stored one
        # is gone, as JSON and as HTML, for the hostile-named trace too.
        cache = os.path.join(logdir, ".aiprof-serve", "cache")
        for run in (conv, evil):
            stored_json, stored_html = http(port, "/api/runs/%d" % run["id"])[1], http(port, "/runs/%d" % run["id"])[1]
            stored_report = http(port, "/runs/%d/report" % run["id"])[1]
            page_file = os.path.join(cache, "%d.run" % run["id"])
            had = os.path.exists(page_file)
            if had:
                os.remove(page_file)
            live_json, live_html = http(port, "/api/runs/%d" % run["id"])[1], http(port, "/runs/%d" % run["id"])[1]
            live_report = http(port, "/runs/%d/report" % run["id"])[1]
            stamp = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")  # the report says when it was written
            stored_report, live_report = stamp.sub("T", stored_report), stamp.sub("T", live_report)
            check(had and stored_json == live_json and stored_html == live_html and stored_report == live_report
                  and "<html" in stored_report
                  and json.loads(stored_json)["title"] == run["name"],
                  "run %d's stored pages equal the pages computed again (JSON, HTML, report)" % run["id"])

        # Pages escape every trace string and file name.
        s, page, hdr = http(port, "/")
        check(s == 200 and re.search(r'<head><meta charset="utf-8">\s*<meta http-equiv="Content-Security-Policy" '
                                     r'content="default-src &#39;none&#39;; script-src &#39;sha256-', page) is not None
              and hdr.get("X-Content-Type-Options") == "nosniff", "runs page carries the page shell's CSP first in <head>")
        check(hdr.get("X-Frame-Options") == "DENY" and hdr.get("Content-Security-Policy") == "frame-ancestors 'none'",
              "no other site may frame the pages (headers: %r)" % {k: v for k, v in hdr.items() if "Frame" in k or "Security" in k})
        check("<b>\"x" not in page and "evil&lt;b&gt;&quot;x&#39;&amp;.json" in page, "runs page escapes the file name")
        # Each utilisation says its base (audit2 item 10: "56.0%" alone, read
        # as the summary's share of the device span).
        s, body, _ = http(port, "/api/runs")
        api_rows = json.loads(body)["sections"]["runs"]["blocks"][0]["rows"] if s == 200 else []
        with_util = [r for r in api_rows if r["device_util"] is not None]
        check(with_util and all(r["device_util_basis"].startswith(("device busy time / ", "main-thread op time / "))
                                for r in with_util),
              "the runs API gives each utilisation's base: %r" % [(r["device_util"], r["device_util_basis"])
                                                                  for r in api_rows][:4])
        shown = re.findall(r"<td>(\d+\.\d%[^<]*)</td>", page)
        check(len(shown) == len(with_util) and all(" of device busy time / " in t or " of main-thread op time / " in t
                                                  for t in shown),
              "the runs page shows each utilisation with its base: %r" % shown[:4])
        s, page, _ = http(port, "/runs/%d" % evil["id"])
        check(s == 200 and "<script>alert(1)" not in page and "onerror=alert(2)>" not in page
              and "&lt;script&gt;alert(1)&lt;/script&gt;" in page, "run page escapes op names")
        s, page, _ = http(port, "/runs/%d/report" % evil["id"])
        check(s == 200 and "<script>alert(1)" not in page and "Content-Security-Policy" in page, "report page escapes")
        s, page, _ = http(port, "/runs/%d/flame" % evil["id"])
        check(s == 200 and "<script>alert(1)" not in page and "Content-Security-Policy" in page, "flame page escapes")
        s, page, _ = http(port, "/runs/%d/topology" % evil["id"])
        check(s == 200 and "<script>alert(1)" not in page, "topology page")
        s, body, _ = http(port, "/api/runs/%d" % evil["id"])
        doc = json.loads(body)
        ops = {r["name"]: r for r in doc["sections"]["top_ops"]["blocks"][0]["rows"]}
        check(set(EVIL) <= set(ops), "API run document round-trips hostile names")
        check(all(ops[n]["count"] == 1 for n in EVIL), "each hostile op counted once (hand-made trace)")
        s, body, _ = http(port, "/api/runs/%d/query?sql=%s" % (evil["id"], urllib.parse.quote(
            "SELECT count(*) AS n, sum(dur) AS total FROM slices")))
        q = json.loads(body)
        check(s == 200 and q["rows"][0] == [len(EVIL), sum((50 + i) * 1000 for i in range(len(EVIL)))],
              "query counts the hand-made slices: %s" % q.get("rows"))
        s, body, _ = http(port, "/api/runs/%d/query?sql=%s" % (evil["id"], urllib.parse.quote("DELETE FROM slices")))
        check(s == 400, "query is read-only (DELETE refused)")
        s, page, _ = http(port, "/runs/%d/query?sql=%s" % (evil["id"], urllib.parse.quote("SELECT name FROM slices")))
        check(s == 200 and "&lt;script&gt;" in page and "<script>alert" not in page, "query page escapes rows")

        # Timeline tiles: every hand-made slice counted once, listed or merged.
        s, body, _ = http(port, "/api/runs/%d/timeline?width=4" % evil["id"])
        tile = json.loads(body) if s == 200 else {}
        names = [x["name"] for t in tile.get("tracks", []) for x in t["slices"]]
        check(s == 200 and tile["listed"] + tile["merged"] == len(EVIL) and set(names) <= set(EVIL),
              "timeline tile counts the hand-made slices: %s" % {k: tile.get(k) for k in ("listed", "merged")})
        inst = tile.get("instants", {})
        inst_names = [inst["kinds"][g["kind"]]["name"] for t in tile.get("tracks", []) for g in t.get("instants", [])
                      for _ in g.get("ts_ns", [])] if inst else []
        check(s == 200 and inst.get("count") == len(EVIL) and sorted(inst_names) == sorted(EVIL)
              and all(k["category"] == "<b>" + k["name"] for k in inst.get("kinds", [])),
              "timeline tile carries the hand-made thread instants, names round-trip: %s" % inst.get("count"))
        s, page, _ = http(port, "/runs/%d/timeline?start=0&end=%d" % (evil["id"], tile.get("end_ns", 1)))
        check(s == 200 and "<svg" in page and "<script>alert" not in page and "onerror=alert(2)>" not in page
              and "<b>" not in page and page.count('class="instant"') >= 1,
              "timeline page draws the tile and its instants, names escaped")
        check(http(port, "/api/runs/%d/timeline?start=5&end=2" % evil["id"])[0] == 400, "timeline: end before start is 400")

        # Compare: validation verdicts with intervals.
        res = by_path["resnet50_num_workers_0.pt.trace.json.gz"]
        s, body, _ = http(port, "/api/compare?a=%d&b=%d" % (conv["id"], res["id"]))
        v = json.loads(body) if s == 200 else {}
        lat = [m for m in v.get("metrics", []) if m.get("metric") == "latency"]
        check(s == 200 and v.get("schema") == "aiprof.validation/1" and lat and lat[0]["verdict"] == "regressed"
              and lat[0]["ci"]["rel_low"] > 0, "compare: latency regressed with a positive interval")
        # The same sequence as `aiprof validate` (ValidateRuns): its verdicts,
        # figures, notes and prediction check, but for the runs' labels.
        cli = subprocess.run([exe, "validate", "--before", convnet, "--after",
                              os.path.join(data, "resnet50_num_workers_0.pt.trace.json.gz"), "--format", "json",
                              "--db", os.path.join(tmp, "compare_cli.db")], capture_output=True, text=True)
        c = json.loads(cli.stdout) if cli.stdout.startswith("{") else {}
        def figures(doc):
            return [(m.get("metric"), m.get("verdict"), m.get("before"), m.get("after")) for m in doc.get("metrics", [])]
        check(c and figures(v) == figures(c) and v.get("notes") == c.get("notes")
              and (v.get("prediction") is None) == (c.get("prediction") is None)
              and v.get("before", {}).get("label", "").startswith("run %d" % conv["id"]),
              "compare: the figures, notes and prediction of aiprof validate on the same files, labelled by run: %s vs %s"
              % (v.get("notes"), c.get("notes")))
        s, page, _ = http(port, "/compare?a=%d&b=%d" % (conv["id"], res["id"]))
        check(s == 200 and "regress" in page.lower(), "compare page")
        s, body, _ = http(port, "/api/compare?a=%d&b=%d" % (conv["id"], broken["id"]))
        check(s == 409 and json.loads(body)["state"] == "failed", "compare with a failed run: 409 with its state")
        # The timeline of both runs aligned on steps: steady step k of each,
        # from the step's start, at one time per pixel. Independent: each
        # run's ProfilerStep slices read from its source JSON here.
        def source_steps(path):
            opener = gzip.open if path.endswith(".gz") else open
            events = json.load(opener(path, "rt"))["traceEvents"]
            return {int(e["name"].split("#")[1]): (round(e["ts"] * 1000), round(e["dur"] * 1000)) for e in events
                    if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")}
        src_steps = [source_steps(convnet), source_steps(os.path.join(data, "resnet50_num_workers_0.pt.trace.json.gz"))]
        s, body, _ = http(port, "/api/compare/timeline?a=%d&b=%d&step=1" % (conv["id"], res["id"]))
        ct = json.loads(body) if s == 200 else {}
        sides = ct.get("runs", [])
        ok = s == 200 and ct["step"] == 1 and ct["steps"] >= 2 and [x["run"] for x in sides] == [conv["id"], res["id"]]
        for x, srcs in zip(sides, src_steps):
            ts, dur = srcs.get(x["step_number"], (None, None))
            ok = ok and x["step_dur_ns"] == dur and x["tile"]["start_ns"] == 0 and x["tile"]["end_ns"] <= dur
            # its slices are placed from the step's start: the step itself at 0
            ok = ok and any(sl["ts_ns"] == 0 and sl["dur_ns"] == dur and sl["name"] == "ProfilerStep#%d" % x["step_number"]
                            for t in x["tile"]["tracks"] for sl in t["slices"])
        if len(sides) == 2:
            bins = [x["tile"]["bin_ns"] for x in sides]
            ok = ok and abs(bins[0] - bins[1]) <= 0.01 * max(bins) and max(x["tile"]["width"] for x in sides) == 1000
        check(ok, "compare timeline: step 1 of each run from its start, same time per pixel, durations as in the "
                  "sources: %s" % [(x["step_number"], x["step_dur_ns"], x["tile"]["width"]) for x in sides])
        # Each run's tile carries the thread instants of its step's window,
        # counted from its source's 'i' events here.
        def source_instants(path):
            opener = gzip.open if path.endswith(".gz") else open
            return [round(e["ts"] * 1000) for e in json.load(opener(path, "rt"))["traceEvents"]
                    if e.get("ph") in ("i", "I") and e.get("s", "t") == "t"]
        src_inst = [source_instants(convnet), source_instants(os.path.join(data, "resnet50_num_workers_0.pt.trace.json.gz"))]
        counts = []
        for x, srcs, inst in zip(sides, src_steps, src_inst):
            ts, _ = srcs.get(x["step_number"], (0, 0))
            counts.append((x["tile"].get("instants", {}).get("count"), sum(1 for v in inst if ts <= v < ts + x["tile"]["end_ns"])))
        check(len(counts) == 2 and all(a == b for a, b in counts) and counts[1][1] > 100,
              "compare timeline: each run's tile holds its step's thread instants (tile, source): %s" % counts)
        s, page, _ = http(port, "/compare?a=%d&b=%d&step=1" % (conv["id"], res["id"]))
        check(s == 200 and 'id="timeline-a"' in page and 'id="timeline-b"' in page and "next step" in page
              and "previous step" in page, "compare page draws both runs' step 1 with step navigation")
        # Zoomed: one window, from each step's start, for both runs; the
        # shorter step covers only its part of it, at the same time per bin.
        if len(sides) == 2:
            durs = [x["step_dur_ns"] for x in sides]
            lo, hi = min(durs) // 2, min(durs) // 2 + max(durs) // 4
            s, body, _ = http(port, "/api/compare/timeline?a=%d&b=%d&step=1&start=%d&end=%d" % (conv["id"], res["id"], lo, hi))
            zt = json.loads(body) if s == 200 else {}
            zs = zt.get("runs", [])
            ok = s == 200 and (zt["start_ns"], zt["end_ns"], zt["span_ns"]) == (lo, hi, max(durs)) and len(zs) == 2
            for x in zs:
                want_end = min(hi, x["step_dur_ns"])
                ok = ok and x["tile"]["start_ns"] == lo and x["tile"]["end_ns"] == want_end
                ok = ok and abs(x["tile"]["bin_ns"] - (hi - lo) / 1000.0) <= 0.01 * (hi - lo) / 1000.0
                ok = ok and x["tile"]["width"] == max(1, round(1000.0 * (want_end - lo) / (hi - lo)))
            check(ok, "compare timeline zoomed to [%d, %d): both steps' part of the window at one time per bin: %s"
                  % (lo, hi, [(x["tile"]["start_ns"], x["tile"]["end_ns"], x["tile"]["width"]) for x in zs]))
            s, body, _ = http(port, "/api/compare/timeline?a=%d&b=%d&step=1&start=%d&end=%d" % (
                conv["id"], res["id"], min(durs) + 1, max(durs)))
            late = json.loads(body) if s == 200 else {}
            shorter = durs.index(min(durs))
            check(s == 200 and late["runs"][shorter]["tile"] is None and late["runs"][1 - shorter]["tile"] is not None,
                  "compare timeline past the shorter step's end: no tile for it")
            s, page, _ = http(port, "/compare?a=%d&b=%d&step=1&start=%d&end=%d" % (conv["id"], res["id"], min(durs) + 1, max(durs)))
            check(s == 200 and "before the window starts" in page and 'data-zoom-base="/compare?a=' in page,
                  "compare page zoomed past the shorter step: says so, zoom data for the page's script")
            check(http(port, "/api/compare/timeline?a=%d&b=%d&step=1&start=%d&end=%d" % (
                conv["id"], res["id"], max(durs), max(durs) + 5))[0] == 400, "compare timeline: a window past both steps is 400")
        # Counters and flows in a tile: the GPU run's launch -> kernel flows
        # starting in the whole run, counted against the source's flow events.
        s, body, _ = http(port, "/api/runs/%d/timeline" % res["id"])
        tile = json.loads(body) if s == 200 else {}
        src_flows = sum(1 for e in json.load(gzip.open(os.path.join(data, "resnet50_num_workers_0.pt.trace.json.gz"), "rt"))["traceEvents"]
                        if e.get("ph") == "s")
        flows = tile.get("flows", {})
        check(s == 200 and "counters" in tile and flows.get("count") == src_flows
              and sum(n for _, n in flows.get("bins", [])) + len(flows.get("listed", [])) == src_flows,
              "tile of the GPU run: its %d flows (source 's' events) counted: %s" % (src_flows, flows.get("count")))
        # Its thread instants (Kineto's [memory] events): the whole run's tile
        # lists every one (under the budget), each on its thread, counted
        # against the source's thread-scoped 'i' events.
        src_events = json.load(gzip.open(os.path.join(data, "resnet50_num_workers_0.pt.trace.json.gz"), "rt"))["traceEvents"]
        src_inst = sum(1 for e in src_events if e.get("ph") in ("i", "I") and e.get("s", "t") == "t")
        inst = tile.get("instants", {})
        listed = sum(len(g.get("ts_ns", [])) for t in tile.get("tracks", []) for g in t.get("instants", []))
        check(s == 200 and src_inst > 10000 and inst.get("count") == src_inst and listed == src_inst
              and not inst.get("binned") and sum(k["total"] for k in inst.get("kinds", [])) == src_inst,
              "tile of the GPU run: its %d thread instants listed: %s" % (src_inst, inst.get("count")))
        # Zoomed in to a tenth: the instants inside the window, by the listed times.
        span_ns = tile.get("end_ns", 30)
        lo, hi = span_ns // 3, span_ns // 3 + span_ns // 10
        s, body, _ = http(port, "/api/runs/%d/timeline?start=%d&end=%d&width=500" % (res["id"], lo, hi))
        zt = json.loads(body) if s == 200 else {}
        times = [x for t in tile.get("tracks", []) for g in t.get("instants", []) for x in g.get("ts_ns", [])]
        zoomed = zt.get("instants", {}).get("count")
        check(s == 200 and zoomed == sum(1 for x in times if lo <= x < hi) and zoomed > 0,
              "zoomed tile of the GPU run: %s instants, as the whole tile's times in the window say" % zoomed)
        s, body, _ = http(port, "/api/compare/timeline?a=%d&b=%d&step=9999" % (conv["id"], res["id"]))
        check(s == 400 and "steady steps to align" in json.loads(body)["error"], "compare timeline: a step past the end is 400")
        s, body, _ = http(port, "/api/compare/timeline?a=%d&b=%d" % (conv["id"], evil["id"]))
        check(s == 422 and "no steady steps" in json.loads(body)["error"], "compare timeline: a run without steps is 422")

        s, body, _ = http(port, "/api/history?service=" + urllib.parse.quote(service))
        hist = json.loads(body) if s == 200 else []
        check([(h["overall"], h["alert"]) for h in hist] == [("no_change", False), ("regressed", True)],
              "history: both stored validations, newest first: %s" % [h.get("overall") for h in hist])
        s, page, _ = http(port, "/history?service=" + urllib.parse.quote(service))
        check(s == 200 and "2 validation(s), 1 with a significant regression" in page and "<b>x</b>" not in page
              and "Latency change against the baseline" in page and "<svg" in page,
              "history page: chart over time, regressions counted, service name escaped")
        base_steps = sorted(d for _, d in source_steps(convnet).values())
        m = re.search(r'<p id="baseline">Baseline #\d+, stored [^<]+ from <code>([^<]+)</code>: (\d+) step sample\(s\), median ([^<]+)\.</p>', page)
        n = len(base_steps)
        src_median_ms = (base_steps[n // 2] if n % 2 else (base_steps[n // 2 - 1] + base_steps[n // 2]) / 2) / 1e6
        check(m is not None and m.group(1) == convnet and int(m.group(2)) == n and m.group(3).endswith(" ms")
              and abs(float(m.group(3)[:-3]) - src_median_ms) <= 0.006,
              "history page names the baseline: its source, its %d steps and their median (%.3f ms from the source "
              "JSON): %s" % (n, src_median_ms, m.group(0) if m else "no baseline line"))
        s, body, _ = http(port, "/api/history?service=nobody")
        check(s == 200 and json.loads(body) == [], "history of an unknown service is empty")
        # CLI writers and the server's readers on one baseline database:
        # four validations stored in parallel while the history is read;
        # none lost, every read answered.
        history_reads = []
        writing = [True]

        def read_history():
            while writing[0]:
                s, body, _ = http(port, "/api/history?service=" + urllib.parse.quote(service))
                history_reads.append(len(json.loads(body)) if s == 200 else -s)
        reader = threading.Thread(target=read_history)
        reader.start()
        writers = [subprocess.Popen([exe, "validate", "--baseline", service, "--after", convnet, "--db", baselines,
                                     "--format", "json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                   for _ in range(4)]
        codes = [w.wait(timeout=120) for w in writers]
        writing[0] = False
        reader.join()
        s, body, _ = http(port, "/api/history?service=" + urllib.parse.quote(service))
        check(codes == [0] * 4 and s == 200 and len(json.loads(body)) == 6 and history_reads
              and all(2 <= n <= 6 for n in history_reads) and history_reads == sorted(history_reads),
              "4 validations stored in parallel while the server reads the history: 6 stored, %d reads %s..%s"
              % (len(history_reads), history_reads[:1], history_reads[-1:]))

        # Paths never leave the logdir; unknown routes are 404.
        for bad in ["/runs/../../etc/passwd", "/api/runs/%2e%2e", "/api/runs/1x", "/etc/passwd", "/runs/999999"]:
            s, _, _ = http(port, bad)
            check(s == 404, "404 for " + bad)
        s, body, _ = http(port, "/api/runs?q=" + urllib.parse.quote("team a"))
        found = json.loads(body)["sections"]["runs"]["blocks"][0]["rows"]
        check([x["path"] for x in found] == ["team a/convnet.json"], "search by folder name")

        # Uploads: size limit, then parallel uploads all land.
        s, body, _ = http(port, "/api/runs?name=big.json", "POST", b"x" * (2 << 20))
        check(s == 413, "an upload over --max-upload-mb is refused (413)")
        # In the API's JSON, naming the flag (it was the text "body over N bytes").
        try:
            why = json.loads(body).get("error", "")
        except ValueError:
            why = ""
        check("--max-upload-mb" in why and "2.0 MiB" in why, "the 413 says the size and names the flag: " + repr(body[:200]))
        s, body, _ = http(port, "/api/runs?name=" + urllib.parse.quote("../../escape.json"), "POST", tiny_trace("esc", 3))
        up = json.loads(body)
        check(s == 202 and up["path"].startswith("uploads/") and "/" not in up["path"][len("uploads/"):],
              "an upload's name cannot leave uploads/: " + up.get("path", ""))
        check(not os.path.exists(os.path.join(tmp, "escape.json")) and not os.path.exists(os.path.join(logdir, "escape.json")),
              "nothing written outside uploads/")
        results = {}

        def upload(i):
            results[i] = http(port, "/api/runs?name=par%d.json" % i, "POST", tiny_trace("par%d" % i, i + 1))

        reads = {}
        want_compare = http(port, "/api/compare?a=%d&b=%d" % (conv["id"], res["id"]))[1]
        want_run = http(port, "/api/runs/%d" % conv["id"])[1]

        def read(i):  # validations and run pages while the uploads land
            reads[i] = (http(port, "/api/compare?a=%d&b=%d" % (conv["id"], res["id"]))[1],
                        http(port, "/api/runs/%d" % conv["id"])[1])

        threads = [threading.Thread(target=upload, args=(i,)) for i in range(16)]
        threads += [threading.Thread(target=read, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ids = {i: json.loads(b)["id"] for i, (s, b, _) in results.items() if s == 202}
        check(len(ids) == 16 and len(set(ids.values())) == 16, "16 parallel uploads: 16 distinct runs")
        check(len(reads) == 8 and all(r == (want_compare, want_run) for r in reads.values()),
              "8 parallel validations and run pages during the uploads: identical answers")
        s, _, _ = http(port, "/api/runs?name=garbage.json", "POST", b"\x00\x01 not a trace")
        runs = wait_settled(port, 5 + 1 + 16 + 1)
        by_id = {x["id"]: x for x in runs}
        ok = True
        for i, rid in ids.items():
            s, body, _ = http(port, "/api/runs/%d/query?sql=%s" % (rid, urllib.parse.quote(
                "SELECT name, count(*) FROM slices GROUP BY name")))
            ok = ok and s == 200 and json.loads(body)["rows"] == [["op_par%d" % i, i + 1]]
        check(ok and all(by_id[r]["state"] == "ready" for r in ids.values()), "every upload imported, none mixed up")
        garbage = [x for x in runs if x["path"].endswith("garbage.json")]
        check(len(garbage) == 1 and garbage[0]["state"] == "failed" and garbage[0]["error"],
              "garbage upload fails with a message: " + (garbage[0]["error"] if garbage else ""))
        s, _, _ = http(port, "/")
        check(s == 200, "still serving after bad input")
        # Naming and tagging a run; the search finds the tag.
        s, body, _ = http(port, "/api/runs/%d/name?name=%s&tag=nightly" % (conv["id"], urllib.parse.quote("<base> run")),
                          "POST", b"")
        found = rows(port, q="nightly")
        check(s == 200 and [(x["id"], x["name"], x["tag"]) for x in found] == [(conv["id"], "<base> run", "nightly")],
              "a run is named and tagged, and found by its tag")
        s2, _, _ = http(port, "/api/runs/%d/name?name=%s" % (res["id"], urllib.parse.quote("<renamed> & stored")), "POST", b"")
        s, body, _ = http(port, "/api/runs/%d" % res["id"])
        s3, page, _ = http(port, "/runs/%d" % res["id"])
        check(s2 == 200 and os.path.exists(os.path.join(cache, "%d.run" % res["id"]))
              and json.loads(body)["title"] == "<renamed> & stored" and "<h1>&lt;renamed&gt; &amp; stored</h1>" in page,
              "a renamed run's stored page carries its new name, escaped")
        # A knowledge card added after conversion: the stored page (built
        # without it) is not served; the page computed again carries the
        # card's measured gain for the data-loading suggestion.
        def data_loading_gain(body):
            found = []

            def walk(x):
                if isinstance(x, dict):
                    if x.get("finding") == "The step waits for input data" and "gain_max" in x:
                        found.append((x["gain_min"], x["gain_max"]))
                    for v in x.values():
                        walk(v)
                elif isinstance(x, list):
                    for v in x:
                        walk(v)
            walk(json.loads(body))
            return found
        before_card = data_loading_gain(http(port, "/api/runs/%d" % res["id"])[1])
        subprocess.run([exe, "card", "--before", os.path.join(data, "resnet50_num_workers_0.pt.trace.json.gz"), "--after",
                        os.path.join(data, "resnet50_num_workers_4.pt.trace.json.gz"), "--db", baselines, "--bottleneck",
                        "data_loading", "--fix", "num_workers=4", "-o", os.path.join(tmp, "card.md")],
                       check=True, capture_output=True)
        with_card = http(port, "/api/runs/%d" % res["id"])[1]
        os.remove(os.path.join(cache, "%d.run" % res["id"]))
        live = http(port, "/api/runs/%d" % res["id"])[1]
        check(len(before_card) == 1 and data_loading_gain(with_card) != before_card and with_card == live,
              "a card added after conversion is on the run page: gain %s, then %s" %
              (before_card, data_loading_gain(with_card)))
        # Rescan picks up a new file.
        shutil.copy(convnet, os.path.join(logdir, "team a", "later.json"))
        s, _, _ = http(port, "/api/rescan", "POST", b"")
        check(s == 202, "rescan accepted")
        runs = wait_settled(port, len(runs) + 1)
        check(any(x["path"] == "team a/later.json" and x["state"] == "ready" for x in runs), "rescan indexes a new file")
        up_files = os.listdir(os.path.join(logdir, "uploads"))
        check(all(not (os.stat(os.path.join(logdir, "uploads", f)).st_mode & 0o111) for f in up_files),
              "uploaded files are not executable")
    finally:
        check(stop(p) == 0, "server stops cleanly on SIGTERM")

    # Queries on workers of their own, several at once (they ran one at a
    # time, on the page workers): one page worker and two query workers.
    # Two endless queries both run to the time limit together, so they end
    # about together (one at a time, the second ended a whole limit later);
    # a page asked for while they run is answered before either ends.
    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--request-threads", "1", "--query-threads", "2", "--query-timeout", "3"])
    try:
        rid = wait_settled(port, len(runs))[0]["id"]
        endless = urllib.parse.quote("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c")
        ended = {}

        def endless_query(k):
            status, body, _ = http(port, "/api/runs/%d/query?sql=%s" % (rid, endless), timeout=60)
            ended[k] = (time.monotonic(), status, body)
        threads = [threading.Thread(target=endless_query, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        time.sleep(0.5)  # both sent and running
        s, _, _ = http(port, "/runs")
        page_done = time.monotonic()
        for t in threads:
            t.join(timeout=60)
        check(s == 200 and len(ended) == 2 and all(page_done < e[0] for e in ended.values()),
              "a page is answered while two queries run (before either ends)")
        check(all(e[1] == 503 and "time" in e[2] for e in ended.values()),
              "both endless queries stop at --query-timeout: %s" % [e[2][:120] for e in ended.values()])
        if len(ended) == 2:
            apart = abs(ended[0][0] - ended[1][0])
            check(apart < 1.5, "the two queries ran at once: they ended %.2f s apart (one at a time: 3 s)" % apart)
    finally:
        check(stop(p) == 0, "server stops cleanly on SIGTERM")

    # A stop while queries run (limit 120 s) and more wait: the running ones
    # are cancelled and the waiting ones dropped, so the server exits within
    # stop()'s 20 s (it ran everything queued to its limit first).
    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--query-threads", "1", "--query-timeout", "120"])
    rid = wait_settled(port, len(runs))[0]["id"]
    def unanswered():
        try:
            http(port, "/api/runs/%d/query?sql=%s" % (rid, endless), timeout=200)
        except (OSError, urllib.error.URLError):
            pass  # the stop closes the connections
    for _ in range(3):
        threading.Thread(target=unanswered, daemon=True).start()
    time.sleep(0.5)  # one runs, two wait
    check(stop(p) == 0, "a stop cancels the running query and drops the waiting ones")

    # Tokens: read and upload roles; the index is reused (nothing converted twice).
    tokens = os.path.join(tmp, "tokens")
    open(tokens, "w").write("# roles\nread rrrrrrrrrrrrrrrrrrrr\nupload uuuuuuuuuuuuuuuuuuuu\n")
    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--token-file", tokens, "--scan-interval", "0"])
    try:
        s, _, hdr = http(port, "/api/runs")
        check(s == 401 and "Bearer" in hdr.get("WWW-Authenticate", ""), "no token: 401")
        check(http(port, "/api/runs", token="wrongwrongwrongwrong")[0] == 401, "wrong token: 401")
        check(http(port, "/api/runs", token="rrrrrrrrrrrrrrrrrrrr")[0] == 200, "read token reads")
        s, body, _ = http(port, "/api/runs?name=t.json", "POST", tiny_trace("t", 1), token="rrrrrrrrrrrrrrrrrrrr")
        check(s == 403, "read token cannot upload")
        # The API's refusals are JSON like its other errors (they were plain text).
        check(json.loads(body).get("error") == "this token may only read", "403 in JSON: %r" % body[:200])
        s, body, _ = http(port, "/api/runs")
        check(s == 401 and "Bearer" in json.loads(body).get("error", ""), "401 in JSON: %r" % body[:200])
        s, body, _ = http(port, "/", token="wrongwrongwrongwrong")
        check(s == 401 and body.startswith("needs Authorization"), "a page's 401 stays text: %r" % body[:200])
        check(http(port, "/api/runs?name=t.json", "POST", tiny_trace("t", 1), token="uuuuuuuuuuuuuuuuuuuu")[0] == 202,
              "upload token uploads")
    finally:
        stop(p)


if __name__ == "__main__":
    sys.exit(main())
