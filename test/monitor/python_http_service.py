#!/usr/bin/env python3
"""A Python HTTP service for aiprof monitor's tests and benchmarks: Python's
ThreadingHTTPServer (a thread per connection) on 127.0.0.1, each request
under `with aiprof.request("request")`. After --slow-after seconds every
request also runs planted_slow_checksum(), pure Python (no native call to
hide in), about --slow-ms long; with --slow-kind clock, planted_slow_clock()
instead, which calls the builtin time.perf_counter() in a loop (the
interpreter's C-call frames are then on most of its stacks).

  python_http_service.py PYTHON_PACKAGE_DIR --port-file F [--marks-file M]
      [--slow-after S] [--slow-ms 60] [--slow-kind checksum|clock] [--seconds N]

--marks-file gets "slow_from <CLOCK_MONOTONIC ns>" when the slowdown begins.
"""
import argparse
import http.server
import os
import sys
import threading
import time

sys.path.insert(0, sys.argv[1])
import aiprof  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument('package_dir')
ap.add_argument('--port-file', required=True)
ap.add_argument('--marks-file')
ap.add_argument('--slow-after', type=float, default=-1)
ap.add_argument('--slow-ms', type=float, default=60)
ap.add_argument('--slow-kind', choices=['checksum', 'clock'], default='checksum')
ap.add_argument('--seconds', type=float, default=0)
args = ap.parse_args()

START = time.monotonic()
_slow_marked = threading.Event()
_rounds = [0]  # loop rounds in --slow-ms, measured at start


def planted_slow_checksum(rounds):
    total = 0
    for i in range(rounds):
        total = (total * 31 + i) & 0xffffffff
    return total


def planted_slow_clock(seconds):
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1
    return n


def calibrate():
    # The fastest of a few tries: a loaded machine only makes the slowdown longer.
    per_round = float('inf')
    for _ in range(5):
        t0 = time.perf_counter()
        planted_slow_checksum(20000)
        per_round = min(per_round, (time.perf_counter() - t0) / 20000)
    _rounds[0] = max(1, int(args.slow_ms / 1e3 / per_round))


def handle_request():
    total = sum(range(200))
    if 0 <= args.slow_after <= time.monotonic() - START:
        if not _slow_marked.is_set():
            _slow_marked.set()
            if args.marks_file:
                with open(args.marks_file + '.tmp', 'w') as f:
                    f.write('slow_from %d\n' % time.monotonic_ns())
                os.replace(args.marks_file + '.tmp', args.marks_file)
        if args.slow_kind == 'clock':
            total += planted_slow_clock(args.slow_ms / 1e3)
        else:
            total += planted_slow_checksum(_rounds[0])
    return total


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with aiprof.request('request'):
            body = b'%d\n' % handle_request()
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


calibrate()
server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
server.daemon_threads = True
with open(args.port_file + '.tmp', 'w') as f:
    f.write('%d\n' % server.server_address[1])
os.replace(args.port_file + '.tmp', args.port_file)
if args.seconds > 0:
    threading.Timer(args.seconds, server.shutdown).start()
try:
    server.serve_forever(poll_interval=0.2)
except KeyboardInterrupt:
    pass
