#!/usr/bin/env python3
"""The cost of `aiprof monitor` to a service's throughput (README, "aiprof monitor").

Runs test/monitor/service.cc under test/monitor/load.cc on 127.0.0.1 for
--seconds, alternately without a monitor and with `aiprof monitor --pid`
attached (an alert that never fires, so no deep trace: the steady-state
cost of the live channel, the window and /proc reads), --repeats times
each, and prints the median throughput and client-side p99 of both and the
ratios. --churn-seconds N then runs the service under the monitor for N
seconds with a new connection (so a new service thread) per request, and
prints the VmRSS of service and monitor over that time.

  bench/monitor_overhead.py --aiprof build/aiprof --service build/test/monitor_service \\
      --load build/test/monitor_load [--seconds 8] [--repeats 5] [--connections 4] [--work-us 100] [--window 60s]
      [--churn-seconds 180] [--python-http build/python]

--python-http PACKAGE_PARENT: the service is the issue's case instead,
test/monitor/python_http_service.py (Python's ThreadingHTTPServer, a thread
per connection), loaded with `monitor_load ... http` (a new connection per
request).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def one_run(args, tmp, monitored, seconds=None, reconnect=False, sample_rss=False):
    port_file = os.path.join(tmp, 'port')
    if os.path.exists(port_file):
        os.unlink(port_file)
    env = dict(os.environ, AIPROF_MODE='ring', AIPROF_OUTPUT=os.path.join(tmp, 'svc.aiprof'))
    if args.python_http:
        svc = subprocess.Popen([args.python, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test',
                                                          'monitor', 'python_http_service.py'), args.python_http,
                                '--port-file', port_file], env=env)
    else:
        svc = subprocess.Popen([args.service, '--port-file', port_file, '--work-us', str(args.work_us)], env=env)
    while not os.path.exists(port_file):
        time.sleep(0.01)
    if args.python_http:
        # The Python SDK loads at the first request: one before the monitor attaches.
        import urllib.request
        urllib.request.urlopen('http://127.0.0.1:%s/' % open(port_file).read().strip(), timeout=30).read()
    mon = None
    if monitored:
        mon = subprocess.Popen([args.aiprof, 'monitor', '--pid', str(svc.pid), '--alert', 'p99_latency > 100s',
                                '--window', args.window, '--interval', '1s', '-o', os.path.join(tmp, 'incidents')],
                               stderr=subprocess.PIPE, text=True)
        line = mon.stderr.readline()  # "watching pid ..." once attached
        assert 'watching pid' in line, line
    time.sleep(0.5)
    cmd = [args.load, open(port_file).read().strip(), str(args.connections), str(seconds or args.seconds)]
    if args.python_http:
        cmd += ['0', 'http']
    elif reconnect:
        cmd += ['0', 'reconnect']
    load = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    rss = []
    while load.poll() is None:
        time.sleep(0.5)
        if sample_rss and (not rss or time.monotonic() - rss[-1][0] >= 5):
            rss.append((time.monotonic(), rss_kb(svc.pid), rss_kb(mon.pid) if mon else -1))
    out = load.communicate()[0]
    if mon:
        mon.terminate()
        mon.wait(timeout=30)
    svc.terminate()
    svc.wait(timeout=30)
    result = json.loads(out)
    result['rss'] = rss
    return result


def rss_kb(pid):
    try:
        for line in open('/proc/%d/status' % pid):
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    except OSError:
        pass
    return -1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--aiprof', required=True)
    ap.add_argument('--service', required=True)
    ap.add_argument('--load', required=True)
    ap.add_argument('--seconds', type=float, default=8)
    ap.add_argument('--repeats', type=int, default=5)
    ap.add_argument('--connections', type=int, default=4)
    ap.add_argument('--work-us', type=int, default=100)
    ap.add_argument('--window', default='60s', help='the monitor\'s --window (shorter than --seconds: a full window)')
    ap.add_argument('--reconnect', action='store_true', help='a new connection per request in the overhead runs too')
    ap.add_argument('--churn-seconds', type=float, default=0)
    ap.add_argument('--python-http', help='<build>/python: measure test/monitor/python_http_service.py instead')
    ap.add_argument('--python', default=sys.executable)
    args = ap.parse_args()
    base, mon = [], []
    with tempfile.TemporaryDirectory(prefix='aiprof-monitor-bench-') as tmp:
        for i in range(args.repeats):
            # Alternate, so drift (thermal, other load) hits both sides alike.
            for monitored in ((False, True) if i % 2 == 0 else (True, False)):
                r = one_run(args, tmp, monitored, reconnect=args.reconnect)
                (mon if monitored else base).append(r)
                print('%s %.0f req/s, p99 %.3f ms' % ('monitored  ' if monitored else 'unmonitored', r['throughput'],
                                                       r['p99_ms']), flush=True)
        if base:
            b = statistics.median(r['throughput'] for r in base)
            m = statistics.median(r['throughput'] for r in mon)
            bp = statistics.median(r['p99_ms'] for r in base)
            mp = statistics.median(r['p99_ms'] for r in mon)
            print(json.dumps({'unmonitored_req_per_s': round(b), 'monitored_req_per_s': round(m),
                              'throughput_ratio': round(m / b, 4), 'unmonitored_p99_ms': round(bp, 4),
                              'monitored_p99_ms': round(mp, 4), 'p99_ratio': round(mp / bp, 4) if bp else None,
                              'repeats': args.repeats, 'seconds': args.seconds, 'connections': args.connections,
                              'work_us': args.work_us, 'window': args.window, 'reconnect': args.reconnect,
                              'service': 'python_http_service.py' if args.python_http else 'service.cc'}))
        if args.churn_seconds > 0:
            r = one_run(args, tmp, True, seconds=args.churn_seconds, reconnect=True, sample_rss=True)
            rss = r['rss']
            print(json.dumps({'churn_seconds': args.churn_seconds, 'requests': r['requests'],
                              'threads_started': r['requests'],
                              'service_rss_kb': {'first': rss[0][1], 'last': rss[-1][1], 'max': max(x[1] for x in rss)},
                              'monitor_rss_kb': {'first': rss[0][2], 'last': rss[-1][2], 'max': max(x[2] for x in rss)},
                              'samples': [[round(t - rss[0][0]), s, m] for t, s, m in rss]}))


if __name__ == '__main__':
    main()
