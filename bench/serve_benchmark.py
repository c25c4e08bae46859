#!/usr/bin/env python3
"""`aiprof serve`: indexing throughput and page latency.

Makes a logdir of COPIES copies of a trace (default: a trace of --mb MiB
built by bench/make_large_trace.py), starts the server, and measures
  * indexing: from start until every run is ready (import + native write +
    the analyses of the runs list), as MB/s of input;
  * the first view of a run (its native file opened, the report's analyses
    run once), then warm latencies (p50/p95 over --requests requests) of the
    runs list, a run page, its JSON and a query;
  * timeline tiles (p50/p95) over windows of the whole run down to 1/1000
    of it at random places, 1000 px wide;
  * the server's peak RSS (VmHWM);
  * with --browser: time to first contentful paint in headless Chromium of
    the run's page and of its timeline at four zoom levels
    (bench/serve_paint.js; needs node, playwright-core and chromium, as the
    browser tests do).
Latencies are wall times of whole HTTP requests on loopback.

  bench/serve_benchmark.py --aiprof build/aiprof [--mb 100] [--copies 3] [--trace T]
      [--browser --modules build/browser/node_modules [--node node] [--chromium /usr/bin/chromium]]
"""
import argparse
import json
import random
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def get(port, path):
    t = time.perf_counter()
    with OPENER.open("http://127.0.0.1:%d%s" % (port, path), timeout=600) as r:
        body = r.read()
    return time.perf_counter() - t, body


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--trace", help="input trace (default: make one with make_large_trace.py)")
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--index-threads", type=int, default=1)
    ap.add_argument("--requests", type=int, default=30)
    ap.add_argument("--browser", action="store_true", help="also first paint in Chromium (serve_paint.js)")
    ap.add_argument("--node", default="node")
    ap.add_argument("--modules", default="build/browser/node_modules")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--paint-repeats", type=int, default=5)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="aiprof_serve_bench_")
    try:
        trace = a.trace
        if not trace:
            trace = os.path.join(tmp, "large.json")
            subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "make_large_trace.py"), trace,
                            "--mb", str(a.mb)], check=True, stdout=subprocess.DEVNULL)
        logdir = os.path.join(tmp, "logs")
        os.makedirs(logdir)
        for i in range(a.copies):
            shutil.copy(trace, os.path.join(logdir, "run%d%s" % (i, os.path.splitext(trace)[1])))
        total = a.copies * os.path.getsize(trace)
        t0 = time.perf_counter()
        p = subprocess.Popen([a.aiprof, "serve", "--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                              "--index-threads", str(a.index_threads)], stderr=subprocess.PIPE, text=True)
        port = int(re.search(r":(\d+)/", p.stderr.readline()).group(1))
        try:
            while True:
                _, body = get(port, "/api/runs")
                rows = json.loads(body)["sections"]["runs"]["blocks"][0]["rows"]
                if len(rows) == a.copies and all(r["state"] in ("ready", "failed") for r in rows):
                    break
                time.sleep(0.05)
            index_s = time.perf_counter() - t0
            failed = [r for r in rows if r["state"] != "ready"]
            if failed:
                print("failed runs: %s" % failed)
                return 1
            rid = rows[0]["id"]
            first, _ = get(port, "/runs/%d" % rid)
            res = {"index_s": index_s, "index_mb_s": total / 1e6 / index_s, "input_mb": total / 1e6,
                   "first_run_page_s": first}
            for name, path in (("runs_list", "/"), ("run_page", "/runs/%d" % rid), ("run_json", "/api/runs/%d" % rid),
                               ("query", "/api/runs/%d/query?sql=SELECT%%20count(*)%%20FROM%%20slices" % rid)):
                times = [get(port, path)[0] for _ in range(a.requests)]
                res[name + "_p50_ms"] = statistics.median(times) * 1000
                res[name + "_p95_ms"] = pct(times, 0.95) * 1000
            # Tiles while zooming: windows of 1, 1/10, 1/100, 1/1000 of the run at random places, 1000 px.
            _, body = get(port, "/api/runs/%d/timeline?width=1" % rid)
            span = json.loads(body)["end_ns"]
            rnd = random.Random(1)
            tiles = []
            for _ in range(a.requests):
                for frac in (1, 10, 100, 1000):
                    length = max(1, span // frac)
                    start = rnd.randrange(0, max(1, span - length))
                    tiles.append(get(port, "/api/runs/%d/timeline?start=%d&end=%d&width=1000" % (rid, start, start + length))[0])
            res["tile_p50_ms"] = statistics.median(tiles) * 1000
            res["tile_p95_ms"] = pct(tiles, 0.95) * 1000
            status = open("/proc/%d/status" % p.pid).read()
            res["peak_rss_mb"] = int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024
            if a.browser:
                env = dict(os.environ, NODE_PATH=os.path.abspath(a.modules))
                out = subprocess.run([a.node, os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_paint.js"),
                                      "--url", "http://127.0.0.1:%d" % port, "--run", str(rid), "--span", str(span),
                                      "--repeats", str(a.paint_repeats), "--chromium", a.chromium],
                                     env=env, check=True, capture_output=True, text=True, timeout=1200).stdout
                res["browser"] = json.loads(out)
                status = open("/proc/%d/status" % p.pid).read()
                res["peak_rss_mb_after_browser"] = int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024
            print(json.dumps(res, indent=1))
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=30)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
