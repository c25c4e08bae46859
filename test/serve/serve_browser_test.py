#!/usr/bin/env python3
"""Starts `aiprof serve` on loopback over real fixtures, a trace with hostile
names (events and file name) and a broken trace, waits until every run is
converted, pushes one more with a hostile service name (aiprof push), stores
a knowledge card with a hostile fix, then drives the pages in headless Chromium
(serve_browser_checks.js, playwright-core as the other browser tests).

  serve_browser_test.py --aiprof build/aiprof --data test/data --node node
      --modules build/browser/node_modules --chromium /usr/bin/chromium --screenshots DIR
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_e2e_test as e2e  # noqa: E402  (its server helpers)


def main():
    ap = argparse.ArgumentParser()
    for k in ("aiprof", "data", "node", "modules", "chromium", "screenshots"):
        ap.add_argument("--" + k, required=True)
    a = ap.parse_args()
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
            runs = {r["path"]: r for r in e2e.wait_settled(port, 4)}
            if len(runs) != 4 or runs[evil_name]["state"] != "ready":
                print("runs not ready: %s" % runs)
                return 1
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
                                 "--service", service, "--fix", fix],
                                env=env, timeout=240).returncode
        finally:
            e2e.stop(p)
        return rc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
