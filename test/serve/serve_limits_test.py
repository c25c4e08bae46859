#!/usr/bin/env python3
"""`aiprof serve` limits and hardening, the real server on loopback, over
small hand-made inputs only (made here, labelled as such): conversion limits
(decompressed bytes, events, time) met while the input streams, bounded run
pages, file modes, the storage limit and run deletion, and the HTTP checks
(Origin, Host, Allow, token file, query timeout, stop). Fast: a few seconds.

  serve_limits_test.py --aiprof build/aiprof
"""
import argparse
import gzip
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import threading
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_e2e_test import FAILURES, check, http, start, stop, tiny_trace  # noqa: E402


def zstd_space_bomb(gib, head=b'{"traceEvents":[', tail=b"]}"):
    """Hand-made zstd frame: `head`, `gib` GiB of spaces as RLE blocks of
    128 KiB (4 bytes each), `tail`. No zstd library needed; 32 KiB per GiB."""
    out = bytearray(b"\x28\xb5\x2f\xfd")  # magic
    out += bytes([0x00, 0x38])  # no content size, no checksum; window 2^17
    def block(kind, size, last=False):
        return struct.pack("<I", (size << 3) | (kind << 1) | int(last))[:3]
    out += block(0, len(head)) + head  # raw block
    blocks = gib * 8192
    rle = block(1, 128 << 10) + b" "
    out += rle * blocks
    out += block(0, len(tail), True) + tail
    return bytes(out)


def upload(port, name, body, token=None):
    s, text, _ = http(port, "/api/runs?name=" + name, method="POST", body=body, token=token)
    return s, (json.loads(text) if text.strip().startswith("{") else {"text": text})


def settle(port, run_id, timeout=30, token=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        s, body, _ = http(port, "/api/runs/%d" % run_id, token=token)
        if s in (200, 409):
            return s, body
        time.sleep(0.05)
    return s, body


def conversion_limit_tests(exe, tmp):
    logdir = os.path.join(tmp, "limits")
    os.makedirs(logdir)
    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--max-convert-events", "1000", "--max-convert-mb", "1"])
    try:
        # Hand-made: 5000 one-op events, gzip (about 400 KB of JSON).
        s, r = upload(port, "events.json.gz", gzip.compress(tiny_trace("e", 5000)))
        check(s == 202, "the event bomb is accepted for conversion")
        s, body = settle(port, r["id"])
        check(s == 409 and "more than 1000 events" in body and "--max-convert-events" in body,
              "over --max-convert-events: the run failed naming the limit: %s" % body.strip()[:300])
        s, page, _ = http(port, "/runs/%d" % r["id"])
        check(s == 200 and 'id="run-error"' in page and "more than 1000 events" in page,
              "the run's page shows the failed conversion and the limit")
        # Hand-made zstd bomb: 8 GiB of whitespace in 256 KiB. Stopped at
        # 1 MiB while it streams: decompressing it all would take many seconds.
        t0 = time.time()
        s, r = upload(port, "space.json.zst", zstd_space_bomb(8))
        s, body = settle(port, r["id"])
        took = time.time() - t0
        check(s == 409 and "more than 1048576 bytes of decompressed input" in body and "--max-convert-mb" in body
              and "space.json.zst" in body,
              "over --max-convert-mb: the run failed naming the file and the limit: %s" % body.strip()[:300])
        check(took < 5, "the bomb was stopped while streaming (%.1f s for 8 GiB)" % took)
        check(not [f for f in os.listdir(os.path.join(logdir, ".aiprof-serve", "cache"))
                   if f.startswith(str(r["id"]) + ".")],
              "a run stopped during its import leaves nothing in the cache")
        # (The bomb stops before any cache file is written, so this guards the
        # import path only; the removal of files written before a later limit,
        # indexer.cc's fail(), has no test: no input here passes the import and
        # then reliably outlasts the time limit.)
        # The server goes on: a small trace converts after the bombs.
        s, r = upload(port, "ok.json", tiny_trace("ok", 50))
        s, body = settle(port, r["id"])
        check(s == 200, "a small trace after the bombs is ready: %s" % body.strip()[:200])
    finally:
        check(stop(p) == 0, "server stopped cleanly")

    logdir = os.path.join(tmp, "slow")
    os.makedirs(logdir)
    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--max-convert-mb", "0", "--max-convert-seconds", "0.3"])
    try:
        t0 = time.time()
        s, r = upload(port, "slow.json.zst", zstd_space_bomb(16))
        s, body = settle(port, r["id"])
        check(s == 409 and "ran longer than 0.3 s" in body and "--max-convert-seconds" in body,
              "over --max-convert-seconds: the run failed naming the limit: %s" % body.strip()[:300])
        check(time.time() - t0 < 8, "stopped at the time limit, not at the end of 16 GiB")
        s, _, _ = http(port, "/")
        check(s == 200, "the server answers after a stopped conversion")
    finally:
        check(stop(p) == 0, "server stopped cleanly")


def alternating_trace(n):
    """Hand-made: n ops alternating between two names on one thread."""
    ev = [{"ph": "X", "name": "op_%s" % "ab"[i % 2], "cat": "cpu_op", "pid": 1, "tid": 1, "ts": i * 10, "dur": 5}
          for i in range(n)]
    return json.dumps({"traceEvents": ev}).encode()


def page_size_tests(exe, tmp):
    logdir = os.path.join(tmp, "pages")
    os.makedirs(logdir)
    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0"])
    try:
        # One op repeated is no step (the trial's 1.5 M one-op "steps").
        s, r = upload(port, "one.json", tiny_trace("one", 3000))
        s, body = settle(port, r["id"])
        check(s == 200 and json.loads(body)["sections"]["headline"]["blocks"][0]["values"]["steps"]["value"] == 0,
              "one op repeated 3000 times gives no steps")
        # Two ops alternating: 1500 steps of period 2; the chart is bucketed.
        s, r = upload(port, "two.json", alternating_trace(3000))
        s, body = settle(port, r["id"])
        doc = json.loads(body) if s == 200 else {}
        steps = doc.get("sections", {}).get("steps", {}).get("blocks", [])
        series = [b for b in steps if b.get("type") == "series"]
        points = series[0]["points"] if series else []
        check(s == 200 and 0 < len(points) <= 1000, "1500 steps drawn with at most 1000 points (%d)" % len(points))
        check(any("1500 steps, drawn as 500 buckets" in json.dumps(b) for b in steps),
              "the page says how the steps were bucketed")
    finally:
        check(stop(p) == 0, "server stopped cleanly")


def file_mode_tests(exe, tmp):
    logdir = os.path.join(tmp, "modes")
    os.makedirs(logdir)
    old = os.umask(0o022)  # the usual umask: the server restricts its files itself
    try:
        p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0"])
    finally:
        os.umask(old)
    try:
        s, r = upload(port, "m.json", alternating_trace(30))
        settle(port, r["id"])
        state = os.path.join(logdir, ".aiprof-serve")
        paths = [state, os.path.join(state, "cache"), os.path.join(logdir, "uploads")]
        paths += [os.path.join(state, f) for f in os.listdir(state) if f.startswith("index.db")]
        paths += [os.path.join(state, "cache", f) for f in os.listdir(os.path.join(state, "cache"))]
        paths += [os.path.join(logdir, "uploads", f) for f in os.listdir(os.path.join(logdir, "uploads"))]
        modes = {os.path.relpath(x, logdir): os.stat(x).st_mode & 0o777 for x in paths}
        loose = {k: oct(v) for k, v in modes.items() if v & 0o027}
        check(len(modes) >= 7 and any(k.endswith(".aiprof") for k in modes) and any(k.endswith(".run") for k in modes),
              "the cache holds the run's files: %s" % sorted(modes))
        check(not loose, "nothing the server wrote is writable by its group or readable by others: %s" % loose)
    finally:
        check(stop(p) == 0, "server stopped cleanly")


def cpu_seconds(pid):
    """User and system CPU time of process `pid` so far, in seconds (/proc)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def raw(port, head, timeout=30):
    """A request head sent as given (hand-made headers); the status line
    and the Allow header of the answer, "" when there was none."""
    lines = raw_lines(port, head, timeout)
    allow = [x.split(":", 1)[1].strip() for x in lines if x.lower().startswith("allow:")]
    return lines[0], (allow[0] if allow else "")


def raw_lines(port, head, timeout=30):
    """The answer's status line and header lines to a hand-made request head."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(head.encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            got = s.recv(4096)
            if not got:
                break
            answer += got
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        answer = b""
    finally:
        s.close()
    return answer.decode("latin-1").split("\r\n\r\n")[0].split("\r\n")


def storage_and_delete_tests(exe, tmp):
    logdir = os.path.join(tmp, "storage")
    os.makedirs(logdir)
    open(os.path.join(logdir, "team.json"), "wb").write(alternating_trace(30))
    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--max-storage-mb", "1"])
    try:
        # Hand-made: 1.2 MB (1.14 MiB) of bytes that are no trace (kept,
        # failed). Over the limit alone: whether the team run's cache is
        # written yet is a race (at 1.1 MB = 1.05 MiB without it the 507 said
        # "hold 1.0 MiB", the clang sanitizer suite under load, 2026-12-06).
        s, big = upload(port, "junk.json", b"\x00junk" * 240000)
        s, body = settle(port, big["id"])
        check(s == 409, "the junk upload failed its conversion")
        s, r = upload(port, "more.json", tiny_trace("m", 10))
        check(s == 507 and "--max-storage-mb" in r.get("error", "") and "DELETE /api/runs/ID" in r.get("error", ""),
              "over --max-storage-mb an upload is refused with 507 and says why: %s %s" % (s, r))
        # What it holds, to 0.1 MiB (the 1.2 MB upload, and the team run's cache once written): more than the limit, as
        # it is; whole MiB said "hold 1 MiB, the limit is 1 MiB" (trial_serve2).
        held = re.search(r"hold ([0-9.]+) MiB", r.get("error", ""))
        check(held is not None and float(held.group(1)) > 1.0, "the 507 says how much is held: %s" % r)
        upload_file = os.path.join(logdir, big["path"])
        s, text, _ = http(port, "/api/runs/%d" % big["id"], method="DELETE")
        check(s == 200 and json.loads(text).get("deleted") is True, "DELETE /api/runs/ID removes a run: %s" % text)
        check(not os.path.exists(upload_file), "its upload file is gone")
        check(http(port, "/api/runs/%d" % big["id"])[0] == 404, "and its row")
        check(http(port, "/api/runs/%d" % big["id"], method="DELETE")[0] == 404, "deleting it again: 404")
        s, r = upload(port, "more.json", tiny_trace("m", 10))
        check(s == 202, "after the delete, uploads are taken again")
        s, body = settle(port, r["id"])
        cache = os.path.join(logdir, ".aiprof-serve", "cache")
        had = sorted(f for f in os.listdir(cache) if f.startswith("%d." % r["id"]))
        s, text, _ = http(port, "/api/runs/%d" % r["id"], method="DELETE")
        left = sorted(f for f in os.listdir(cache) if f.startswith("%d." % r["id"]))
        check(s == 200 and had and not left, "a ready run's cache files go with it: %s -> %s" % (had, left))
        team = [x for x in json.loads(http(port, "/api/runs")[1])["sections"]["runs"]["blocks"][0]["rows"]
                if x["path"] == "team.json"]
        s, text, _ = http(port, "/api/runs/%d" % team[0]["id"], method="DELETE") if team else (0, "", {})
        check(s == 409 and "not an upload" in text and os.path.exists(os.path.join(logdir, "team.json")),
              "a file of the logdir is not deleted through the API: %s" % text.strip())
    finally:
        check(stop(p) == 0, "server stopped cleanly")


def upload_head(port, name, length, chunked=False):
    """Opens an upload with Expect: 100-continue and reads the server's word on
    its headers: (socket, 100 when the body may come, else the refusal's
    status and body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    length_header = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: %d" % length
    s.sendall(b"POST /api/runs?name=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nExpect: 100-continue\r\n\r\n" %
              (name.encode(), length_header))
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(65536)
        if not chunk:
            break
        head += chunk
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
    return s, status, head


def finish_upload(s, body, chunked=False):
    s.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if chunked else body)
    answer = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        answer += chunk
    s.close()
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def concurrent_upload_storage_tests(exe, tmp):
    """Uploads admitted at once each passed --max-storage-mb: the check saw
    only the bytes already on disk, and an admitted upload has written none
    (20 concurrent 1 MB uploads under --max-storage-mb 1 were all taken, 20
    MB stored; trial_limits). Those still arriving now count for their
    Content-Length (a chunked one for the upload limit): only the one
    upload admitted under the limit passes it."""
    logdir = os.path.join(tmp, "concurrent")
    os.makedirs(logdir)
    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--max-storage-mb", "1", "--max-upload-mb", "1"])
    try:
        # Hand-made: 0.6 MB of a trace each (spaces inside its JSON).
        body = b'{"traceEvents":[' + b" " * 600000 + b"]}"
        opened = [upload_head(port, "c%d.json" % i, len(body)) for i in range(5)]
        statuses = [st for _, st, _ in opened]
        check(statuses[:2] == [100, 100] and statuses[2:] == [507] * 3,
              "of 5 uploads of 0.6 MB opened at once under a 1 MiB limit, the first two go on (the second was "
              "admitted at 0.6 MB) and the rest are refused from their headers: %s" % statuses)
        refusal = opened[2][2].decode(errors="replace")
        check("still arriving" in refusal and "--max-storage-mb" in refusal,
              "the 507 counts the uploads still arriving: %s" % refusal[refusal.find("{"):][:300])
        codes = [finish_upload(s, body) for s, st, _ in opened if st == 100]
        check(codes == [202, 202], "the two admitted uploads are taken: %s" % codes)
        for s, st, _ in opened:
            if st != 100:
                s.close()
        # Nothing arrives now: a broken-off upload gives its reservation back.
        s, st, _ = upload_head(port, "late.json", len(body))
        check(st == 507, "over the limit with nothing arriving, an upload is still refused: %s" % st)
        s.close()
        uploads = os.path.join(logdir, "uploads")
        stored = sum(os.path.getsize(os.path.join(uploads, f)) for f in os.listdir(uploads))
        check(stored <= 2 * len(body), "at most the limit and one upload stored: %d bytes" % stored)
    finally:
        check(stop(p) == 0, "server stopped cleanly")
    # A chunked upload, whose length is unknown, counts for the upload limit
    # while it arrives; one that breaks off gives it back.
    logdir = os.path.join(tmp, "concurrent_chunked")
    os.makedirs(logdir)
    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--max-storage-mb", "2", "--max-upload-mb", "1"])
    try:
        a, st_a, _ = upload_head(port, "a.json", 0, chunked=True)
        b, st_b, _ = upload_head(port, "b.json", 0, chunked=True)
        c, st_c, _ = upload_head(port, "c.json", 0, chunked=True)
        check((st_a, st_b, st_c) == (100, 100, 507),
              "chunked uploads count 1 MiB each while they arrive (limit 2 MiB): %s" % [st_a, st_b, st_c])
        c.close()
        b.close()  # broken off: its reservation goes with it
        deadline = time.time() + 10
        while True:
            d, st_d, _ = upload_head(port, "d.json", 0, chunked=True)
            if st_d == 100 or time.time() > deadline:
                break
            d.close()
            time.sleep(0.05)
        check(st_d == 100, "a broken-off upload's share is given back: %s" % st_d)
        check(finish_upload(a, tiny_trace("a", 10), chunked=True) == 202, "the first chunked upload is taken")
        d.close()
    finally:
        check(stop(p) == 0, "server stopped cleanly")


def http_checks(exe, tmp):
    logdir = os.path.join(tmp, "http")
    os.makedirs(logdir)
    open(os.path.join(logdir, "t.json"), "wb").write(alternating_trace(30))
    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--query-timeout", "0.2"])
    try:
        own = "127.0.0.1:%d" % port
        post = "POST /api/rescan HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n%s\r\n"
        check(raw(port, post % (own, "Origin: http://%s\r\n" % own))[0] == "HTTP/1.1 202 Accepted",
              "a POST from the listener's own origin passes")
        for origin in ("http://127.0.0.1:1", "https://" + own, "http://127.0.0.1", "http://localhost:%d" % port):
            check(raw(port, post % (own, "Origin: %s\r\n" % origin))[0] == "HTTP/1.1 403 Forbidden",
                  "a POST from origin %s (another port, scheme or host) is refused" % origin)
        get = "GET / HTTP/1.1\r\n%s\r\n"
        check(raw(port, get % ("Host: %s\r\n" % own))[0] == "HTTP/1.1 200 OK", "one Host: 200")
        check(raw(port, get % ("Host: evil.example\r\nHost: %s\r\n" % own))[0] == "HTTP/1.1 400 Bad Request",
              "two Host headers: 400")
        check(raw(port, get % "")[0] == "HTTP/1.1 400 Bad Request", "HTTP/1.1 without Host: 400")
        # The server's own refusals, before any handler, carry nosniff too
        # (they were bare: helper sec's note).
        for what, head in (("400 (two Host headers)", get % ("Host: evil.example\r\nHost: %s\r\n" % own)),
                           ("431 (headers over 16 KiB)", get % ("Host: %s\r\nX-Pad: %s\r\n" % (own, "a" * 20000)))):
            lines = raw_lines(port, head)
            check("x-content-type-options: nosniff" in [x.lower() for x in lines[1:]],
                  "a %s answer says nosniff: %s" % (what, lines))
        check(raw(port, "GET / HTTP/1.0\r\n\r\n")[0] == "HTTP/1.1 200 OK", "HTTP/1.0 without Host: 200")
        check(raw(port, get % ("Host: %s\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n" % own))[0]
              == "HTTP/1.1 400 Bad Request", "two Authorization headers: 400")
        status, allow = raw(port, "PUT /api/runs HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n" % own)
        check(status.startswith("HTTP/1.1 405") and allow == "GET, HEAD, POST", "405 names what is allowed: " + allow)
        status, allow = raw(port, get.replace("/", "/api/rescan", 1) % ("Host: %s\r\n" % own))
        check(status.startswith("HTTP/1.1 405") and allow == "POST", "GET /api/rescan: 405, Allow: POST")
        deadline = time.time() + 30
        while time.time() < deadline and http(port, "/api/runs/1")[0] != 200:
            time.sleep(0.05)
        endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
        s, text, _ = http(port, "/api/runs/1/query?sql=" + urllib.parse.quote(endless))
        check(s == 503 and "time limit" in text, "a query past --query-timeout: 503 (%d %s)" % (s, text.strip()))
        s, text, _ = http(port, "/api/runs/1/query?sql=" + urllib.parse.quote("SELECT nosuch FROM slices"))
        check(s == 400, "a bad query: 400")
        # A NUL in the SQL (trial_serve2 S6): the engine looped for ever at full CPU past --query-timeout and the
        # request got no answer; two such requests took every query worker (--query-threads 2) for good.
        for _ in range(3):
            try:
                s, text, _ = http(port, "/api/runs/1/query?sql=SELECT%201%00", timeout=10)
            except (socket.timeout, TimeoutError, urllib.error.URLError) as e:
                s, text = 0, str(e)
            check(s == 400 and "NUL byte" in text, "a NUL in the SQL: 400 at once (%d %s)" % (s, text.strip()))
        try:
            s, text, _ = http(port, "/api/runs/1/query?sql=" + urllib.parse.quote("SELECT 7"), timeout=10)
        except (socket.timeout, TimeoutError, urllib.error.URLError) as e:
            s, text = 0, str(e)
        check(s == 200 and json.loads(text)["rows"] == [[7]], "queries are answered after it (%d %s)" % (s, text))
    finally:
        check(stop(p) == 0, "server stopped cleanly")

    # A query running when the server stops is answered 503, not cut off.
    p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--query-timeout", "30"])
    try:
        deadline = time.time() + 30
        while time.time() < deadline and http(port, "/api/runs/1")[0] != 200:
            time.sleep(0.05)
        got = []
        q = "/api/runs/1/query?sql=" + urllib.parse.quote(endless)
        cpu0 = cpu_seconds(p.pid)
        t = threading.Thread(target=lambda: got.append(raw(port, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % q)))
        t.start()
        # Until the query runs: the idle server spends no CPU, the endless
        # query a core. (A fixed 0.5 s stood for it: on a loaded machine a
        # request that reached the server only after the stop would be
        # refused, not answered 503, with no fault of the server's.)
        deadline = time.time() + 30
        while time.time() < deadline and cpu_seconds(p.pid) - cpu0 < 0.3:
            time.sleep(0.05)
        check(cpu_seconds(p.pid) - cpu0 >= 0.3, "the endless query runs before the stop")
    finally:
        rc = stop(p)
    t.join(10)
    check(rc == 0 and got and got[0][0] == "HTTP/1.1 503 Service Unavailable",
          "SIGTERM during a query: it is answered 503 (%s)" % (got,))


def gone_client_tests(exe, tmp):
    """Queries whose clients hung up are not run (trial_limits, Left 1).

    N endless queries (each stopped by --query-timeout 2), their clients
    gone after 0.3 s (as `curl -m 0.3`), then SELECT 1. Before the fix the
    server ran every query to its limit for no one: the SELECT waited for
    N x 2 s over the 2 query threads, 8 s (7.7 s measured with the binary
    before the fix; trial_limits saw 12.7 s for 12 x 3 s). Now a query
    whose client has gone is not run if it waits, and cancelled if it runs
    (0.0 s measured): the bound, half the old figure, is wide. Which queries
    count as gone depends on when each client's close is seen (one still
    running at the stop counts as stopped), hence 1..N log lines."""
    logdir = os.path.join(tmp, "gone")
    os.makedirs(logdir)
    open(os.path.join(logdir, "t.json"), "wb").write(alternating_trace(30))
    p = subprocess.Popen([exe, "serve", "--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--query-timeout", "2", "--query-threads", "2"],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", p.stderr.readline())
    if not m:
        p.kill()
        raise SystemExit("server did not start: " + p.stderr.read())
    port = int(m.group(1))
    log = []
    reader = threading.Thread(target=lambda: log.extend(iter(p.stderr.readline, "")), daemon=True)
    reader.start()
    n, timeout_s, threads = 8, 2, 2
    try:
        deadline = time.time() + 30
        while time.time() < deadline and http(port, "/api/runs/1")[0] != 200:
            time.sleep(0.05)
        endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
        head = "GET /api/runs/1/query?sql=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % urllib.parse.quote(endless)
        clients = []
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(head.encode())
            clients.append(s)
        time.sleep(0.3)
        for s in clients:
            s.close()
        t0 = time.time()
        s, text, _ = http(port, "/api/runs/1/query?sql=" + urllib.parse.quote("SELECT 1"), timeout=60)
        took = time.time() - t0
        old = n * timeout_s / threads
        check(s == 200 and json.loads(text)["rows"] == [[1]] and took < old / 2,
              "SELECT 1 after %d queries whose clients left: answered in %.1f s, under half of the %.1f s "
              "they held the query threads before (%d %s)" % (n, took, old, s, text.strip()[:200]))
    finally:
        check(stop(p) == 0, "server stopped cleanly")
    reader.join(10)
    gone = [x for x in log if "client has gone" in x]
    check(1 <= len(gone) <= n and all("query of run 1" in x for x in gone),
          "each query dropped for a gone client is logged (%d of %d): %s" % (len(gone), n, gone[:3]))


def token_file_tests(exe, tmp):
    logdir = os.path.join(tmp, "tokens")
    os.makedirs(logdir)
    tokens = os.path.join(tmp, "tokens.txt")
    open(tokens, "w").write("read rrrrrrrrrrrrrrrrrrrr\nupload uuuuuuuuuuuuuuuuuuuu\n")
    os.chmod(tokens, 0o644)
    p = subprocess.Popen([exe, "serve", "--logdir", logdir, "--listen", "127.0.0.1:0", "--token-file", tokens],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    first = p.stderr.readline()
    second = p.stderr.readline()
    port = int(second.split("127.0.0.1:")[1].split("/")[0]) if "127.0.0.1:" in second else 0
    try:
        check("warning" in first and tokens in first and "0644" in first,
              "a token file open to others is warned about: " + first.strip())
        s, r = upload(port, "t.json", tiny_trace("t", 10), token="uuuuuuuuuuuuuuuuuuuu")
        check(s == 202, "upload token uploads")
        s, _, _ = http(port, "/api/runs/%d" % r.get("id", 0), method="DELETE", token="rrrrrrrrrrrrrrrrrrrr")
        check(s == 403, "a read token cannot delete")
        s, _, _ = http(port, "/api/runs/%d" % r.get("id", 0), method="DELETE")
        check(s == 401, "no token cannot delete")
        settle(port, r.get("id", 0), token="uuuuuuuuuuuuuuuuuuuu")
        s, _, _ = http(port, "/api/runs/%d" % r.get("id", 0), method="DELETE", token="uuuuuuuuuuuuuuuuuuuu")
        check(s == 200, "an upload token deletes")
    finally:
        check(stop(p) == 0, "server stopped cleanly")
    open(tokens, "w").write("read rrrrrrrrrrrrrrrrrrrr\n# again\nupload rrrrrrrrrrrrrrrrrrrr\n")
    os.chmod(tokens, 0o600)
    r = subprocess.run([exe, "serve", "--logdir", logdir, "--listen", "127.0.0.1:0", "--token-file", tokens],
                       capture_output=True, text=True, timeout=20)
    check(r.returncode == 1 and tokens + ":3" in r.stderr and "line 1" in r.stderr and "warning" not in r.stderr,
          "a token listed with two roles is refused, naming both lines: " + r.stderr.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    a = ap.parse_args()
    exe = os.path.abspath(a.aiprof)
    tmp = tempfile.mkdtemp(prefix="aiprof_serve_limits_")
    try:
        conversion_limit_tests(exe, tmp)
        page_size_tests(exe, tmp)
        file_mode_tests(exe, tmp)
        storage_and_delete_tests(exe, tmp)
        concurrent_upload_storage_tests(exe, tmp)
        http_checks(exe, tmp)
        gone_client_tests(exe, tmp)
        token_file_tests(exe, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
