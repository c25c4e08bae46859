#!/usr/bin/env python3
"""Starts `aiprof serve` on loopback over real fixtures, a large trace made at
set-up, a trace with hostile names (events and file name) and a broken
trace, waits until every run is converted, pushes one more with a hostile service name (aiprof push), stores
a knowledge card with a hostile fix, then drives the pages in headless Chromium
(serve_browser_checks.js, playwright-core as the other browser tests).

  serve_browser_test.py --aiprof build/aiprof --data test/data --node node
      --modules build/browser/node_modules --chromium /usr/bin/chromium --screenshots DIR
      [--large-replicas 30]

The large trace: bench/make_large_trace.py --compact, 30 copies of the
shipped ResNet50 trace's steps (its complete events: ops, runtime calls,
kernels and memsets on CPU threads and GPU streams; args, flows and
instants left out), 1.34 M slices over 35 s in 203 MiB of JSON, made in
about 5 s and converted in about 15 s on a loaded 2-core machine. It is
large for a browser: more events than xprof's 1 M cap, and one SVG element
per slice would be over a million elements, where the page the server sends
holds one tile (at most 1000 bins per track row and 20000 listed slices).
The timeline is zoomed to 1/128 of the run, so the views come from tiles
at six levels of detail.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_e2e_test as e2e  # noqa: E402  (its server helpers)


def main():
    ap = argparse.ArgumentParser()
    for k in ("aiprof", "data", "node", "modules", "chromium", "screenshots"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--large-replicas", type=int, default=30)
    a = ap.parse_args()
    t_begin = time.time()
    for what, path in (("node", a.node), ("chromium", a.chromium),
                       ("playwright-core", os.path.join(a.modules, "playwright-core"))):
        if not shutil.which(path) and not os.path.exists(path):
            print("missing %s (%s): scripts/install-deps.sh and the browser_npm_install test install it" % (what, path))
            return 1
    tmp = tempfile.mkdtemp(prefix="aiprof_serve_browser_")
    try:
        logdir = os.path.join(tmp, "logs")
        os.makedirs(logdir)
        shutil.copy(os.path.join(a.data, "convnet_bs8_channels_last.kineto.json"), os.path.join(logdir, "convnet.json"))
        shutil.copy(os.path.join(a.data, "resnet50_num_workers_0.pt.trace.json.gz"), logdir)
        evil_name = "evil<img src=x onerror=alert(1)>.json"
        json.dump(e2e.evil_trace(), open(os.path.join(logdir, evil_name), "w"))
        open(os.path.join(logdir, "broken.json"), "w").write('{"traceEvents": [{"ph": "X", "na')
        # The large run (see above), made from a shipped trace.
        large = os.path.join(logdir, "large_resnet50_x%d.json" % a.large_replicas)
        t = time.time()
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "make_large_trace.py"), large, "--compact",
                        "--src", os.path.join(a.data, "resnet50_num_workers_0.pt.trace.json.gz"),
                        "--replicas", str(a.large_replicas)], check=True, stdout=subprocess.DEVNULL)
        large_bytes = os.path.getsize(large)
        print("large trace: %d bytes of JSON made in %.1f s" % (large_bytes, time.time() - t))
        # A knowledge card with a hostile fix, for the history page.
        baselines = os.path.join(tmp, "baselines.db")
        fix = "num_workers=4 <img src=x onerror=alert(4)>"
        subprocess.run([os.path.abspath(a.aiprof), "card", "--before",
                        os.path.join(a.data, "resnet50_num_workers_0.pt.trace.json.gz"), "--after",
                        os.path.join(a.data, "resnet50_num_workers_4.pt.trace.json.gz"), "--db", baselines,
                        "--bottleneck", "data_loading", "--fix", fix, "-o", os.path.join(tmp, "card.md")],
                       check=True, capture_output=True)
        p, port = e2e.start(os.path.abspath(a.aiprof), ["--logdir", logdir, "--listen", "127.0.0.1:0",
                                                        "--scan-interval", "0", "--baselines", baselines])
        try:
            t = time.time()
            runs = {r["path"]: r for r in e2e.wait_settled(port, 5, timeout=240)}
            large_run = runs.get(os.path.basename(large), {})
            if len(runs) != 5 or runs[evil_name]["state"] != "ready" or large_run.get("state") != "ready":
                print("runs not ready: %s" % runs)
                return 1
            print("all 5 runs converted in %.1f s (the large one in %.1f s)"
                  % (time.time() - t, large_run.get("convert_ms", 0) / 1000.0))
            # The large run's slices, counted by SQL (the tile's own count is checked against it).
            s, body, _ = e2e.http(port, "/api/runs/%d/query?sql=%s" % (
                large_run["id"], urllib.parse.quote("SELECT count(*) FROM slices")))
            assert s == 200, body
            large_slices = json.loads(body)["rows"][0][0]
            # A run pushed with a hostile service name (a fifth run).
            service = "svc<img src=x onerror=alert(3)>"
            subprocess.run([os.path.abspath(a.aiprof), "push", os.path.join(a.data, "alexnet_a100_kineto.json.gz"),
                            "--server", "http://127.0.0.1:%d" % port, "--service", service, "--wait"],
                           check=True, capture_output=True, timeout=120)
            env = dict(os.environ, NODE_PATH=os.path.abspath(a.modules))
            rc = subprocess.run([a.node, os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_browser_checks.js"),
                                 "--url", "http://127.0.0.1:%d" % port, "--screenshots", a.screenshots,
                                 "--chromium", a.chromium, "--hostile-run", str(runs[evil_name]["id"]),
                                 "--a", str(runs["convnet.json"]["id"]),
                                 "--b", str(runs["resnet50_num_workers_0.pt.trace.json.gz"]["id"]),
                                 "--service", service, "--fix", fix, "--large", str(large_run["id"]),
                                 "--large-slices", str(large_slices), "--large-bytes", str(large_bytes)],
                                env=env, timeout=300).returncode
        finally:
            e2e.stop(p)
        print("browser_serve: %.1f s in all" % (time.time() - t_begin))
        return rc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
