#!/usr/bin/env python3
"""`aiprof push` against a real `aiprof serve` on loopback, the runs list
grouped by service, tag and date with search, and the knowledge cards on the
history page (issue #29).

push: a trace uploaded with its service and tag in one request (--wait
until converted), then every refusal with a clear message and exit 1: no
token, a read token, a file over the server's upload limit (nothing stored),
a folder, a missing file, a server that is not there, https, a trace that
does not import (--wait reports the importer's message). Grouping: each
run's service (given at upload, else its top folder in the logdir) and date
(its file's modification time, computed here from os.stat) and the group
counts, hostile service and tag names escaped. Cards: a card stored by
`aiprof card` is listed with the change `aiprof validate` measures on the
same pair, and the prediction it kept against the after run's steady step
time from `aiprof whatif`. An index of schema version 1 (no service column) is upgraded.

  serve_push_test.py --aiprof build/aiprof --data test/data
"""
import argparse
import datetime
import json
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
import urllib.error
import urllib.parse
import urllib.request

FAILURES = []
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never a proxy
READ, UPLOAD = "r" * 24, "u" * 24
EVIL = '<script>alert(1)</script>"&'


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILURES.append(what)


def http(port, path, token=UPLOAD):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path))
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with OPENER.open(req, timeout=60) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


def start(exe, args):
    p = subprocess.Popen([exe, "serve"] + args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    line = p.stderr.readline()
    while line.startswith("aiprof serve: warning:"):  # e.g. a token file open to others
        line = p.stderr.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not m:
        p.kill()
        raise SystemExit("server did not start: " + line + p.stderr.read())
    threading.Thread(target=p.stderr.read, daemon=True).start()
    return p, int(m.group(1))


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        return p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        return -1


def runs(port, query=""):
    s, body = http(port, "/api/runs" + query)
    assert s == 200, body
    return json.loads(body)


def date_of(path):
    return datetime.datetime.fromtimestamp(os.stat(path).st_mtime, datetime.timezone.utc).strftime("%Y-%m-%d")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    exe = os.path.abspath(a.aiprof)
    tmp = tempfile.mkdtemp(prefix="aiprof_push_")
    try:
        run_tests(exe, os.path.abspath(a.data), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d check(s) failed" % len(FAILURES) if FAILURES else "all checks passed")
    return 1 if FAILURES else 0


def push(exe, *args):
    r = subprocess.run([exe, "push", *args], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


def run_tests(exe, data, tmp):
    logdir = os.path.join(tmp, "logs")
    os.makedirs(os.path.join(logdir, "svc-a"))
    convnet = os.path.join(data, "convnet_bs8_channels_last.kineto.json")
    before = os.path.join(data, "resnet50_num_workers_0.pt.trace.json.gz")
    after = os.path.join(data, "resnet50_num_workers_4.pt.trace.json.gz")
    shutil.copy(convnet, os.path.join(logdir, "svc-a", "convnet.json"))
    shutil.copy(convnet, os.path.join(logdir, "top.json"))
    os.utime(os.path.join(logdir, "top.json"), (1600000000, 1600000000))  # 2020-09-13 UTC

    # An index of schema version 1 (no service column), as the previous
    # server wrote it, with one run: upgraded in place, its run kept. Its
    # file is there with the stamp recorded (1 byte, 1 ns): a run whose
    # file is gone leaves the index at the first scan (docs/serve.md).
    with open(os.path.join(logdir, "old.json"), "wb") as f:
        f.write(b"x")
    os.utime(os.path.join(logdir, "old.json"), ns=(1, 1))
    db = os.path.join(tmp, "index", "index.db")
    os.makedirs(os.path.dirname(db))
    con = sqlite3.connect(db)
    con.executescript("""
      CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
      INSERT INTO meta VALUES ('schema_version', '1');
      CREATE TABLE runs(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
        tag TEXT NOT NULL DEFAULT '', size_bytes INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, state TEXT NOT NULL,
        claimed_unix_ms INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '', cache TEXT NOT NULL DEFAULT '',
        source_format TEXT NOT NULL DEFAULT '', steps INTEGER NOT NULL DEFAULT 0, step_p50_ns REAL NOT NULL DEFAULT 0,
        device_util REAL NOT NULL DEFAULT -1, top_finding TEXT NOT NULL DEFAULT '', top_share REAL NOT NULL DEFAULT 0,
        top_basis TEXT NOT NULL DEFAULT '', indexed_unix_ms INTEGER NOT NULL DEFAULT 0, convert_ms REAL NOT NULL DEFAULT 0);
      CREATE INDEX runs_state ON runs(state, id);
      INSERT INTO runs(path, name, tag, size_bytes, mtime_ns, state, error)
        VALUES ('old.json', 'old run', 'v1', 1, 1, 'failed', 'from the version-1 index');
    """)
    con.commit()
    con.close()

    # A knowledge card and the validation of the same pair, stored by the CLI.
    baselines = os.path.join(tmp, "baselines.db")
    r = subprocess.run([exe, "card", "--before", before, "--after", after, "--db", baselines, "--bottleneck",
                        "data_loading", "--fix", "num_workers=4 " + EVIL, "--scene", "resnet50 " + EVIL, "-o",
                        os.path.join(tmp, "card.md")], capture_output=True, text=True)
    check(r.returncode == 0, "aiprof card stores a card: " + r.stderr[-300:])
    val = json.loads(subprocess.run([exe, "validate", "--before", before, "--after", after, "--format", "json"],
                                    capture_output=True, check=True).stdout)
    latency = [m for m in val["metrics"] if m["metric"] == "latency"][0]
    # The after run's steady steps' mean wall time, the prediction's time base,
    # from aiprof whatif (a clause that changes nothing: measured = predicted).
    steady_after = json.loads(subprocess.run([exe, "whatif", after, "--scenario", "remove no_such_op_anywhere",
                                              "--format", "json"], capture_output=True, check=True).stdout)
    steady_after = steady_after["scenarios"][0]["measured_ns"]

    tokens = os.path.join(tmp, "tokens")
    open(tokens, "w").write("read %s\nupload %s\n" % (READ, UPLOAD))
    up_tok, read_tok, bare_tok = (os.path.join(tmp, n) for n in ("up.tok", "read.tok", "bare.tok"))
    open(up_tok, "w").write("# serve's format\nread %s\nupload %s\n" % (READ, UPLOAD))
    open(read_tok, "w").write("read %s\n" % READ)
    open(bare_tok, "w").write("\n%s\n" % UPLOAD)

    p, port = start(exe, ["--logdir", logdir, "--db", db, "--listen", "127.0.0.1:0", "--token-file", tokens,
                          "--scan-interval", "0", "--max-upload-mb", "1", "--baselines", baselines])
    server = "http://127.0.0.1:%d" % port
    try:
        # push, labelled in the same request, waited for.
        rc, out = push(exe, convnet, "--server", server, "--token-file", up_tok, "--service", EVIL, "--tag",
                       "nightly " + EVIL, "--wait")
        m = re.match(r"run (\d+) \(ready\): %s/runs/(\d+) uploads/\S+convnet_bs8_channels_last\.kineto\.json$" %
                     re.escape(server), out.strip())
        check(rc == 0 and m is not None and m.group(1) == m.group(2), "push --wait prints the ready run: " + out)
        pushed = int(m.group(1)) if m else -1
        rows = {x["id"]: x for x in runs(port)["sections"]["runs"]["blocks"][0]["rows"]}
        mine = rows.get(pushed, {})
        check(mine.get("service") == EVIL and mine.get("tag") == "nightly " + EVIL and mine.get("state") == "ready"
              and mine.get("name") == "convnet_bs8_channels_last.kineto.json",
              "the pushed run carries its service, tag and file name: %r" % {k: mine.get(k) for k in ("service", "tag", "name")})
        scanned = [x for x in rows.values() if x["path"] == "svc-a/convnet.json"]
        check(scanned and scanned[0]["steps"] == mine.get("steps") and scanned[0]["step_p50_ns"] == mine.get("step_p50_ns"),
              "the pushed copy has the figures of the same file found in the logdir")
        old = [x for x in rows.values() if x["path"] == "old.json"]
        check(old and old[0]["name"] == "old run" and old[0]["service"] == "" and old[0]["tag"] == "v1",
              "a version-1 index is upgraded, its runs kept")
        rc, out = push(exe, convnet, "--server", server + "/", "--token-file", bare_tok)
        check(rc == 0 and re.match(r"run \d+ \(queued\): ", out) is not None, "a bare-token file; no --wait: queued")

        # Refusals: exit 1, a message saying what to do, nothing stored.
        n_before = len(runs(port)["sections"]["runs"]["blocks"][0]["rows"])
        rc, out = push(exe, convnet, "--server", server)
        check(rc == 1 and "(401)" in out and "--token-file" in out, "no token: " + out.strip())
        rc, out = push(exe, convnet, "--server", server, "--token-file", read_tok)
        check(rc == 1 and "no token" in out and read_tok in out, "a file with only a read token: " + out.strip())
        wrong = os.path.join(tmp, "wrong.tok")
        open(wrong, "w").write("upload " + "w" * 20 + "\n")
        rc, out = push(exe, convnet, "--server", server, "--token-file", wrong)
        check(rc == 1 and "(401)" in out, "a wrong token: 401: " + out.strip())
        big = os.path.join(tmp, "big.json")
        with open(big, "w") as f:
            f.write('{"traceEvents": [' + ",".join(['{"ph":"X","name":"op","pid":1,"tid":1,"ts":%d,"dur":1}' % i
                                                   for i in range(40000)]) + "]}")
        rc, out = push(exe, big, "--server", server, "--token-file", up_tok)
        check(rc == 1 and "(413)" in out and "upload limit" in out, "over --max-upload-mb: " + out.strip())
        rc, out = push(exe, tmp, "--server", server, "--token-file", up_tok)
        check(rc == 1 and "a folder" in out, "a folder: " + out.strip())
        rc, out = push(exe, os.path.join(tmp, "missing.json"), "--server", server, "--token-file", up_tok)
        check(rc == 1 and "missing.json" in out and "No such file" in out, "a missing file: " + out.strip())
        rc, out = push(exe, convnet, "--server", "https://127.0.0.1:%d" % port, "--token-file", up_tok)
        check(rc == 2 and "https is not supported" in out, "https: a bad command line (2): " + out.strip())
        rc, out = push(exe, convnet, "--server", "127.0.0.1:%d" % port, "--token-file", up_tok)
        check(rc == 2 and "expected http://" in out, "no scheme: a bad command line (2): " + out.strip())
        dead = subprocess.run([sys.executable, "-c", "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); "
                               "print(s.getsockname()[1])"], capture_output=True, text=True).stdout.strip()
        rc, out = push(exe, convnet, "--server", "http://127.0.0.1:" + dead, "--token-file", up_tok)
        check(rc == 1 and "cannot connect" in out, "no server there: " + out.strip())
        check(len(runs(port)["sections"]["runs"]["blocks"][0]["rows"]) == n_before, "refused pushes store nothing")
        check(not [f for f in os.listdir(os.path.join(logdir, "uploads")) if "big.json" in f],
              "the refused upload left no file")
        garbage = os.path.join(tmp, "garbage.json")
        open(garbage, "w").write('{"traceEvents": [{"ph": "X", "na')
        rc, out = push(exe, garbage, "--server", server, "--token-file", up_tok, "--wait")
        check(rc == 1 and "failed to import" in out and "truncated JSON" in out, "--wait on a bad trace: " + out.strip())

        # Grouping and search.
        doc = runs(port, "?group=service")
        groups = {g["group"]: g for g in doc["sections"]["groups"]["blocks"][0]["rows"]}
        check(groups.get("svc-a", {}).get("runs") == 1 and groups.get(EVIL, {}).get("runs") == 1
              and groups.get("", {}).get("runs") == 4 and groups.get("", {}).get("failed") == 2,
              "groups by service: the pushed one, the folder, the rest: %r" %
              {k: (g["runs"], g["failed"]) for k, g in groups.items()})
        rows = doc["sections"]["runs"]["blocks"][0]["rows"]
        by_path = {x["path"]: x for x in rows}
        check(by_path["top.json"]["date"] == "2020-09-13" and
              by_path["svc-a/convnet.json"]["date"] == date_of(os.path.join(logdir, "svc-a", "convnet.json")),
              "each run's date is its file's modification day (UTC)")
        dates = [g["group"] for g in runs(port, "?group=date")["sections"]["groups"]["blocks"][0]["rows"]]
        check(dates == sorted(dates, reverse=True) and "2020-09-13" in dates and "1970-01-01" in dates,
              "date groups newest first (the version-1 run's stamp is 1 ns): %s" % dates)
        check(http(port, "/api/runs?group=owner")[0] == 400, "an unknown grouping is 400")
        s, page = http(port, "/")
        heads = re.findall(r'<h2 class="group" data-group="([^"]*)">Service: (.*?) <span', page)
        check(s == 200 and [h[0] for h in heads][-1] == "" and "(no service)" in heads[-1][1]
              and ("svc-a", "svc-a") in heads, "the runs page groups by service by default, none last: %s" % heads)
        check("<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;" in page,
              "hostile service and tag names are escaped on the runs page")
        s, page = http(port, "/?group=tag")
        check(s == 200 and 'data-group="v1">Tag: v1' in page, "grouped by tag")
        s, page = http(port, "/?group=date&q=svc-a")
        check(s == 200 and len(re.findall(r'<tr data-run=', page)) == 1 and "Date: " + date_of(
            os.path.join(logdir, "svc-a", "convnet.json")) in page, "search and date grouping together")
        found = runs(port, "?q=" + urllib.parse.quote("nightly <script>"))["sections"]["runs"]["blocks"][0]["rows"]
        check([x["id"] for x in found] == [pushed], "search finds the pushed run by its tag")
        found = runs(port, "?q=svc-a")["sections"]["runs"]["blocks"][0]["rows"]
        check([x["path"] for x in found] == ["svc-a/convnet.json"], "search by folder (service)")

        # Knowledge cards on the history page and in the API.
        s, body = http(port, "/api/cards")
        cards = json.loads(body)["sections"]["cards"]["blocks"][0]["rows"] if s == 200 else []
        check(len(cards) == 1 and cards[0]["bottleneck"] == "data_loading" and cards[0]["fix"] == "num_workers=4 " + EVIL,
              "/api/cards lists the stored card")
        c = cards[0] if cards else {}
        check(abs(c.get("change_rel", 1) - latency["change_rel"]) < 1e-9 and c.get("change_rel", 0) < -0.1
              and c.get("ci_low_rel", 0) <= c.get("change_rel", 1) <= c.get("ci_high_rel", 0),
              "the card's gain is the latency change aiprof validate measures on the pair (%.4f vs %.4f), "
              "inside its interval" % (c.get("change_rel", 0), latency["change_rel"]))
        check(c.get("predicted_ns") is not None and c.get("prediction_source")
              and abs(c.get("measured_ns", 0) - steady_after) <= 1,
              "the card's prediction is listed against the after run's steady step (%s vs %s ns from aiprof whatif)"
              % (c.get("measured_ns"), steady_after))
        s, page = http(port, "/history")
        check(s == 200 and 'id="cards"' in page and "data_loading" in page and "<script>alert(1)" not in page
              and "num_workers=4 &lt;script&gt;" in page, "the history page lists the cards, escaped")
        pct = "%+.2f%%" % (100 * latency["change_rel"])
        check(pct.replace("-", "−") in page or pct in page, "the history page shows the measured change %s" % pct)
        s, page = http(port, "/cards")
        check(s == 200 and "Content-Security-Policy" in page and "data_loading" in page, "the cards page")
        s, _ = http(port, "/api/cards", token=None)
        check(s == 401, "cards need a token like every page")

        # Compare shows the prediction made from the before run for the fix
        # the after run applied against what the after run measured, as
        # `aiprof validate --before A --after B` does (same baseline database).
        # (Over this server's 1 MiB upload limit: put in the logdir and rescanned.)
        os.makedirs(os.path.join(logdir, "pair"))
        for path in (before, after):
            shutil.copy(path, os.path.join(logdir, "pair"))
        OPENER.open(urllib.request.Request(server + "/api/rescan", data=b"", method="POST",
                                           headers={"Authorization": "Bearer " + UPLOAD}), timeout=60).read()
        ids = [-1, -1]
        deadline = time.time() + 120
        while time.time() < deadline and min(ids) < 0:
            for x in runs(port)["sections"]["runs"]["blocks"][0]["rows"]:
                for i, path in enumerate((before, after)):
                    if x["path"] == "pair/" + os.path.basename(path) and x["state"] == "ready":
                        ids[i] = x["id"]
            time.sleep(0.2)
        cli = json.loads(subprocess.run([exe, "validate", "--before", before, "--after", after, "--db", baselines,
                                         "--format", "json"], capture_output=True, check=True).stdout).get("prediction")
        s, body = http(port, "/api/compare?a=%d&b=%d" % tuple(ids))
        served = json.loads(body).get("prediction") if s == 200 else None
        check(cli is not None and served is not None and served == cli,
              "compare: predicted vs measured as aiprof validate has it: %s" % (
                  {k: (served or {}).get(k) for k in ("fix", "predicted_ms", "measured_ms", "within")}))
        s, page = http(port, "/compare?a=%d&b=%d" % tuple(ids))
        check(s == 200 and "Predicted vs measured" in page, "the compare page shows predicted vs measured")
        s, body = http(port, "/api/compare?a=%d&b=%d&fix=%s" % (ids[0], ids[1], urllib.parse.quote("no-such-fix <b>")))
        check(s == 400 and "no-such-fix <b>" in json.loads(body).get("error", ""), "compare with an unknown fix id: 400 naming it (%d %s)" % (s, body[:300]))
    finally:
        check(stop(p) == 0, "server stops cleanly")


if __name__ == "__main__":
    sys.exit(main())
