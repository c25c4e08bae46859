#!/usr/bin/env python3
"""`aiprof serve` killed (SIGKILL) while it converts a run, then another
server started on the same logdir and index: the run is converted at once.
Before, the killed server's claim kept the run 'converting' for the
stale-claim hour (docs/serve.md, "Index and cache"); a claim now records
its converter (boot id, pid namespace, pid, start time), and a server on
the same machine that finds that process gone queues the run again.

The input is made here: a trace of many small ops (a few seconds to
convert), so the server is caught in the middle of its conversion by
polling the API, without any pause in the product.

  serve_killed_converter_test.py --aiprof build/aiprof
"""
import argparse
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_changing_files_test import many_ops_trace, row_of  # noqa: E402
from serve_e2e_test import FAILURES, check, stop  # noqa: E402


def start(exe, args, log):
    """serve_e2e_test.start, keeping the server's log lines in `log`."""
    p = subprocess.Popen([exe, "serve"] + args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    line = p.stderr.readline()
    while line.startswith("aiprof serve: warning:"):
        line = p.stderr.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not m:
        p.kill()
        raise SystemExit("server did not start: " + line + p.stderr.read())

    def drain():
        for line in p.stderr:
            log.append(line.rstrip("\n"))

    threading.Thread(target=drain, daemon=True).start()
    return p, int(m.group(1))


def index_row(db, path):
    con = sqlite3.connect(db, timeout=30)
    try:
        return con.execute("SELECT id, state FROM runs WHERE path = ?", (path,)).fetchone()
    finally:
        con.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--events", type=int, default=300000)
    a = ap.parse_args()
    exe = os.path.abspath(a.aiprof)
    tmp = tempfile.mkdtemp(prefix="aiprof-serve-killed-")
    env_home = os.path.join(tmp, "home")
    os.makedirs(env_home)
    os.environ.update({"AIPROF_CALIBRATE": "0", "XDG_CONFIG_HOME": env_home, "XDG_DATA_HOME": env_home})
    try:
        logdir = os.path.join(tmp, "logs")
        os.makedirs(logdir)
        many_ops_trace(os.path.join(logdir, "big.json"), a.events)
        db = os.path.join(tmp, "index.db")
        args = ["--logdir", logdir, "--db", db, "--listen", "127.0.0.1:0", "--scan-interval", "0"]

        log_a = []
        p, port = start(exe, args, log_a)
        caught = None
        deadline = time.time() + 60
        while time.time() < deadline and caught is None:
            r = row_of(port, "big.json")
            if r and r["state"] == "converting":
                caught = r
            elif r and r["state"] in ("ready", "failed"):
                break
            else:
                time.sleep(0.002)
        check(caught is not None, "the first server is caught converting big.json")
        if caught is None:
            p.kill()
            p.wait()
            return
        p.send_signal(signal.SIGKILL)
        p.wait()
        row = index_row(db, "big.json")
        check(row is not None and row[1] == "converting",
              "the killed server left big.json 'converting' in the index: %r" % (row,))

        log_b = []
        t0 = time.time()
        q, port_b = start(exe, args, log_b)
        state = None
        deadline = time.time() + 60
        while time.time() < deadline and q.poll() is None:
            r = row_of(port_b, "big.json")
            state = r["state"] if r else None
            if state in ("ready", "failed"):
                break
            time.sleep(0.05)
        took = time.time() - t0
        check(state == "ready", "the second server converts big.json at once (%s after %.1f s; before: "
              "'converting' for the stale-claim hour)" % (state, took))
        requeued = [line for line in log_b if "is gone; queued again" in line]
        check(len(requeued) == 1 and ("pid %d)" % p.pid) in requeued[0],
              "its log names the killed converter: %r" % requeued)
        leftovers = [f for f in os.listdir(os.path.join(tmp, "cache")) if f.endswith(".tmp")] \
            if os.path.isdir(os.path.join(tmp, "cache")) else []
        check(leftovers == [], "no partial cache file is left: %r" % leftovers)
        check(stop(q) == 0, "the second server stops cleanly")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        sys.exit(1)
    print("all passed")


if __name__ == "__main__":
    main()
