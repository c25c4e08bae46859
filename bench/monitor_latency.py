#!/usr/bin/env python3
"""Time from a slowdown to the alert and to the incident (docs/monitor.md,
"Measured").

Runs a service under `aiprof monitor -- CMD` with --window/--interval as an
operator would set them and `--alert "p99_latency > 40ms"`; after
--slow-after seconds every request of the service turns --slow-ms slower
(planted_slow_path in test/monitor/service.cc, planted_slow_checksum in
test/monitor/python_http_service.py), and the service writes the instant it
began (CLOCK_MONOTONIC) to a marks file. Per run it prints the time from
that instant to the alert (alert.json trigger.monotonic_ns, the same clock)
and to the incident's line on the monitor's stdout (written when the
incident folder is complete: flight recorder, --trace-duration of deep
trace, diagnosis). --repeats runs of each service kind, alternated.

  bench/monitor_latency.py --aiprof build/aiprof --service build/test/monitor_service
      --load build/test/monitor_load --python-dir build/python [--repeats 3]
      [--window 60s] [--interval 1s] [--trace-duration 5s] [--slow-after 10] [--rate 50]
"""
import argparse
import glob
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def paced_client(port, rate, stop):
    period, next_t = 1.0 / rate, time.monotonic()
    while not stop.is_set():
        try:
            c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
            c.request('GET', '/')
            c.getresponse().read()
            c.close()
        except OSError:
            pass
        next_t += period
        delay = next_t - time.monotonic()
        if delay > 0:
            stop.wait(delay)
        else:
            next_t = time.monotonic()


def one_run(args, kind, tmp):
    out = os.path.join(tmp, 'incidents-%s-%d' % (kind, time.monotonic_ns()))
    port_file, marks = os.path.join(tmp, 'port'), os.path.join(tmp, 'marks')
    for f in (port_file, marks):
        if os.path.exists(f):
            os.unlink(f)
    if kind == 'cpp':
        service = [args.service, '--port-file', port_file, '--marks-file', marks, '--work-us', '300',
                   '--slow-after', str(args.slow_after), '--slow-ms', str(args.slow_ms)]
    else:
        service = [args.python, os.path.join(HERE, '..', 'test', 'monitor', 'python_http_service.py'), args.python_dir,
                   '--port-file', port_file, '--marks-file', marks, '--slow-after', str(args.slow_after),
                   '--slow-ms', str(args.slow_ms)]
    mon = subprocess.Popen([args.aiprof, 'monitor', '--alert', 'p99_latency > 40ms', '--window', args.window,
                            '--interval', args.interval, '--trace-duration', args.trace_duration, '--once',
                            '--timeout', str(int(args.slow_after + 120)), '--attach-timeout', '30s', '-o', out,
                            '--', *service], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line_at = []

    def read_stdout():
        for _ in mon.stdout:
            line_at.append(time.monotonic_ns())
    reader = threading.Thread(target=read_stdout, daemon=True)
    reader.start()
    deadline = time.monotonic() + 60
    while not os.path.exists(port_file) and time.monotonic() < deadline:
        time.sleep(0.02)
    port = open(port_file).read().strip()
    stop = threading.Event()
    load = None
    if kind == 'cpp':
        load = subprocess.Popen([args.load, port, '4', str(int(args.slow_after + 120))], stdout=subprocess.DEVNULL)
    else:
        threading.Thread(target=paced_client, args=(int(port), args.rate, stop), daemon=True).start()
    mon.wait(timeout=args.slow_after + 180)
    reader.join(timeout=5)
    stop.set()
    if load:
        load.kill()
        load.wait()
    inc = sorted(glob.glob(os.path.join(out, '*-*')))
    if mon.returncode != 3 or not inc or not os.path.exists(marks):
        return {'kind': kind, 'error': 'no incident (monitor exit %s)' % mon.returncode}
    slow_from = int(open(marks).read().split()[1])
    alert = json.load(open(os.path.join(inc[0], 'alert.json')))
    fired = int(alert['trigger']['monotonic_ns'])
    slowest = alert['deep_trace'].get('slowest_request') or {}
    path = slowest.get('path') or [{}]
    return {'kind': kind, 'alert_s': round((fired - slow_from) / 1e9, 3),
            'incident_s': round((line_at[0] - slow_from) / 1e9, 3) if line_at else None,
            'window_requests': alert['trigger']['window']['requests'],
            'named': path[-1].get('function')}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--aiprof', required=True)
    ap.add_argument('--service', required=True)
    ap.add_argument('--load', required=True)
    ap.add_argument('--python-dir', required=True)
    ap.add_argument('--python', default=sys.executable)
    ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--window', default='60s')
    ap.add_argument('--interval', default='1s')
    ap.add_argument('--trace-duration', default='5s')
    ap.add_argument('--slow-after', type=float, default=10)
    ap.add_argument('--slow-ms', type=float, default=60)
    ap.add_argument('--rate', type=float, default=50, help='the Python service\'s paced requests/s')
    args = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory(prefix='aiprof-monitor-latency-') as tmp:
        for i in range(args.repeats):
            for kind in (('cpp', 'python') if i % 2 == 0 else ('python', 'cpp')):
                r = one_run(args, kind, tmp)
                runs.append(r)
                print(json.dumps(r), flush=True)
    summary = {'window': args.window, 'interval': args.interval, 'trace_duration': args.trace_duration}
    for kind in ('cpp', 'python'):
        ok = [r for r in runs if r['kind'] == kind and 'error' not in r]
        if ok:
            summary[kind] = {'runs': len(ok), 'alert_s': [min(r['alert_s'] for r in ok), statistics.median(
                r['alert_s'] for r in ok), max(r['alert_s'] for r in ok)],
                'incident_s': [min(r['incident_s'] for r in ok), statistics.median(r['incident_s'] for r in ok),
                               max(r['incident_s'] for r in ok)]}
    print(json.dumps({'summary': summary}))


if __name__ == '__main__':
    main()
