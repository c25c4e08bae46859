#!/usr/bin/env python3
"""Memory of `aiprof serve` while it serves one large run (issue #29: under
the size of the run's native file plus 200 MB).

Copies TRACE into a fresh logdir under --tmp, starts the server until the
run is converted, stops it, starts it again (serving only: index and cache
kept) and requests the run page, the full report, the timeline page, two
tiles, a query, the run's JSON, compare (the run with itself: validation
and the timeline aligned on steps), the flame graph and topology, printing after each the server's VmHWM
(peak), RssAnon and RssFile from /proc/PID/status, then the native file's
size. The logdir is removed at the end.

  python3 bench/make_large_trace.py /tmp/large2g.json --mb 2000
  python3 bench/serve_memory.py --aiprof build/aiprof --trace /tmp/large2g.json
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def status_mib(pid):
    out = {}
    for line in open("/proc/%d/status" % pid):
        key = line.split(":")[0]
        if key in ("VmHWM", "RssAnon", "RssFile"):
            out[key] = int(line.split()[1]) // 1024
    return out


def start(exe, logdir):
    p = subprocess.Popen([exe, "serve", "--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0"],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    return p, int(re.search(r":(\d+)/", p.stderr.readline()).group(1))


def get(port, path):
    t = time.perf_counter()
    with OPENER.open("http://127.0.0.1:%d%s" % (port, path), timeout=900) as r:
        r.read()
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--tmp", default="/tmp")
    a = ap.parse_args()
    logdir = tempfile.mkdtemp(prefix="aiprof_serve_memory_", dir=a.tmp)
    try:
        shutil.copy(a.trace, logdir)
        p, port = start(a.aiprof, logdir)
        while True:
            with OPENER.open("http://127.0.0.1:%d/api/runs" % port) as r:
                rows = json.loads(r.read())["sections"]["runs"]["blocks"][0]["rows"]
            if rows and all(x["state"] in ("ready", "failed") for x in rows):
                break
            time.sleep(0.5)
        print("converted: %s; converting peak %s MiB" % (rows[0]["state"], status_mib(p.pid)["VmHWM"]))
        p.send_signal(signal.SIGTERM)
        p.wait()
        rid = rows[0]["id"]
        p, port = start(a.aiprof, logdir)
        try:
            for path in ("/runs/%d" % rid, "/runs/%d/report" % rid, "/runs/%d/timeline" % rid,
                         "/api/runs/%d/timeline?width=1000" % rid,
                         "/api/runs/%d/timeline?start=0&end=100000000&width=1000" % rid,
                         "/api/runs/%d/query?sql=SELECT%%20count(*)%%20FROM%%20slices" % rid, "/api/runs/%d" % rid,
                         "/compare?a=%d&b=%d" % (rid, rid), "/runs/%d/flame" % rid, "/runs/%d/topology" % rid):
                took = get(port, path)
                print("%-58s %6.2f s  %s MiB" % (path, took, status_mib(p.pid)))
            cache = os.path.join(logdir, ".aiprof-serve", "cache")
            native = sum(os.path.getsize(os.path.join(cache, f)) for f in os.listdir(cache) if f.endswith(".aiprof"))
            peak = status_mib(p.pid)["VmHWM"]
            print("native file %.1f MiB; serving peak %d MiB; target (native + 200 MB) %.1f MiB: %s" %
                  (native / 2**20, peak, (native + 200e6) / 2**20, "met" if peak * 2**20 < native + 200e6 else "NOT met"))
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait()
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


if __name__ == "__main__":
    main()
