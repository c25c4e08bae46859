#!/usr/bin/env python3
"""Memory of a service and of `aiprof monitor` over a long run of thread
churn (docs/monitor.md, "Measured").

The issue's case: a Python ThreadingHTTPServer (test/monitor/python_http_service.py,
a new thread per connection, `with aiprof.request` around each request,
AIPROF_MODE=ring) watched by `aiprof monitor --pid` with an alert that never
fires, under a paced client that opens a new connection per request at
--rate requests/s (modest on purpose: the point is the number of threads the
SDK sees over time, not load). Every --every seconds it prints one JSON line
with the VmRSS of both and the requests so far; at the end a summary.

  bench/monitor_memory.py --aiprof build/aiprof --python-dir build/python
      [--seconds 1800] [--rate 20] [--every 10] [--window 60s] [--out FILE]
"""
import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def rss_kb(pid):
    try:
        for line in open('/proc/%d/status' % pid):
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    except OSError:
        pass
    return -1


def client(port, rate, stop, counts):
    period = 1.0 / rate
    next_t = time.monotonic()
    while not stop.is_set():
        try:
            c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
            c.request('GET', '/')
            c.getresponse().read()
            c.close()
            counts['ok'] += 1
        except OSError:
            counts['failed'] += 1
        next_t += period
        delay = next_t - time.monotonic()
        if delay > 0:
            stop.wait(delay)
        else:
            next_t = time.monotonic()  # fell behind: no burst to catch up


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--aiprof', required=True)
    ap.add_argument('--python-dir', required=True, help='<build>/python (the built aiprof package\'s parent)')
    ap.add_argument('--python', default=sys.executable)
    ap.add_argument('--seconds', type=float, default=1800)
    ap.add_argument('--rate', type=float, default=20)
    ap.add_argument('--every', type=float, default=10)
    ap.add_argument('--window', default='60s')
    ap.add_argument('--out', help='also append the JSON lines to this file')
    args = ap.parse_args()
    out = open(args.out, 'a') if args.out else None

    def emit(obj):
        line = json.dumps(obj)
        print(line, flush=True)
        if out:
            out.write(line + '\n')
            out.flush()

    with tempfile.TemporaryDirectory(prefix='aiprof-monitor-memory-') as tmp:
        port_file = os.path.join(tmp, 'port')
        env = dict(os.environ, AIPROF_MODE='ring', AIPROF_OUTPUT=os.path.join(tmp, 'svc.aiprof'))
        svc = subprocess.Popen([args.python, os.path.join(HERE, '..', 'test', 'monitor', 'python_http_service.py'),
                                args.python_dir, '--port-file', port_file], env=env)
        deadline = time.monotonic() + 60
        while not os.path.exists(port_file) and time.monotonic() < deadline:
            time.sleep(0.05)
        port = int(open(port_file).read())
        # The SDK starts when the first request is recorded: one request before the monitor attaches.
        c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
        c.request('GET', '/')
        c.getresponse().read()
        c.close()
        mon = subprocess.Popen([args.aiprof, 'monitor', '--pid', str(svc.pid), '--alert', 'p99_latency > 100s',
                                '--window', args.window, '--interval', '1s', '--attach-timeout', '30s',
                                '-o', os.path.join(tmp, 'incidents')], stderr=subprocess.PIPE, text=True)
        line = mon.stderr.readline()
        if 'watching pid' not in line:
            sys.exit('the monitor did not attach: %s' % line)
        threading.Thread(target=lambda: [None for _ in mon.stderr], daemon=True).start()  # drain
        stop = threading.Event()
        counts = {'ok': 0, 'failed': 0}
        t = threading.Thread(target=client, args=(port, args.rate, stop, counts), daemon=True)
        start = time.monotonic()
        t.start()
        samples = []
        while True:
            now = time.monotonic() - start
            s = {'t_s': round(now), 'requests': counts['ok'], 'failed': counts['failed'],
                 'service_rss_kb': rss_kb(svc.pid), 'monitor_rss_kb': rss_kb(mon.pid)}
            samples.append(s)
            emit(s)
            if now >= args.seconds or svc.poll() is not None or mon.poll() is not None:
                break
            time.sleep(max(0.0, args.every - (time.monotonic() - start - now)))
        stop.set()
        t.join(timeout=15)
        mon.terminate()
        mon.wait(timeout=30)
        svc.terminate()
        svc.wait(timeout=30)

        def span(key, frm, to):
            xs = [s[key] for s in samples if frm <= s['t_s'] <= to]
            return {'first': xs[0], 'last': xs[-1], 'max': max(xs)} if xs else None
        half = samples[-1]['t_s'] / 2
        emit({'summary': True, 'seconds': samples[-1]['t_s'], 'rate': args.rate, 'requests': counts['ok'],
              'failed': counts['failed'], 'threads_started': counts['ok'] + 1,
              'service_rss_kb': span('service_rss_kb', 0, 1e9), 'monitor_rss_kb': span('monitor_rss_kb', 0, 1e9),
              'service_rss_kb_second_half': span('service_rss_kb', half, 1e9),
              'monitor_rss_kb_second_half': span('monitor_rss_kb', half, 1e9)})


if __name__ == '__main__':
    main()
