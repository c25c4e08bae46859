#!/usr/bin/env python3
"""The cost of the Python SDK's frame sampler to a Python service during a
deep trace (docs/monitor.md, "Python functions in the deep trace").

test/monitor/python_http_service.py under `aiprof monitor -- CMD` with an
alert that fires at once (`request_count > 5`, --trace-duration 8s); when
the incident line is on stderr the deep trace is running, and the closed-loop
load (`monitor_load PORT C SECONDS 0 http`, a new connection per request)
runs for --seconds inside it. Alternately with the sampler on
(AIPROF_PY_SAMPLE_HZ=200, the default) and off (=0): the same deep trace
(perf at 999 Hz) either way, so the ratio is the sampler's own cost.

  bench/monitor_pysampler_cost.py --aiprof build/aiprof --load build/test/monitor_load
      --python-dir build/python [--repeats 4] [--seconds 5] [--connections 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def one_run(args, tmp, hz):
    port_file = os.path.join(tmp, 'port')
    if os.path.exists(port_file):
        os.unlink(port_file)
    env = dict(os.environ, AIPROF_PY_SAMPLE_HZ=str(hz))
    mon = subprocess.Popen([args.aiprof, 'monitor', '--alert', 'request_count > 5', '--window', '10s',
                            '--interval', '0.25s', '--trace-duration', '%ds' % (args.seconds + 3), '--once',
                            '--timeout', '90s', '--attach-timeout', '30s',
                            '-o', os.path.join(tmp, 'incidents-%d' % time.monotonic_ns()), '--', args.python,
                            os.path.join(HERE, '..', 'test', 'monitor', 'python_http_service.py'), args.python_dir,
                            '--port-file', port_file], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           env=env)
    while not os.path.exists(port_file):
        time.sleep(0.02)
    url = 'http://127.0.0.1:%s/' % open(port_file).read().strip()
    for _ in range(10):  # the SDK loads at the first request; then enough requests to fire
        urllib.request.urlopen(url, timeout=30).read()
        time.sleep(0.05)
    for line in mon.stderr:
        if 'incident 1 in' in line:
            break
    time.sleep(1.0)  # the flight recorder's flush, the capture's start
    out = subprocess.run([args.load, open(port_file).read().strip(), str(args.connections), str(args.seconds), '0',
                          'http'], capture_output=True, text=True, timeout=120).stdout
    mon.stderr.read()
    mon.wait(timeout=120)
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--aiprof', required=True)
    ap.add_argument('--load', required=True)
    ap.add_argument('--python-dir', required=True)
    ap.add_argument('--python', default=sys.executable)
    ap.add_argument('--repeats', type=int, default=4)
    ap.add_argument('--seconds', type=int, default=5)
    ap.add_argument('--connections', type=int, default=2)
    args = ap.parse_args()
    on, off = [], []
    with tempfile.TemporaryDirectory(prefix='aiprof-pysampler-cost-') as tmp:
        for i in range(args.repeats):
            for hz in ((200, 0) if i % 2 == 0 else (0, 200)):
                r = one_run(args, tmp, hz)
                (on if hz else off).append(r)
                print('sampler %-3s %.0f req/s, p99 %.3f ms' % ('on' if hz else 'off', r['throughput'], r['p99_ms']),
                      flush=True)
    t_on, t_off = statistics.median(r['throughput'] for r in on), statistics.median(r['throughput'] for r in off)
    p_on, p_off = statistics.median(r['p99_ms'] for r in on), statistics.median(r['p99_ms'] for r in off)
    print(json.dumps({'sampler_off_req_per_s': round(t_off), 'sampler_on_req_per_s': round(t_on),
                      'throughput_ratio': round(t_on / t_off, 4), 'sampler_off_p99_ms': round(p_off, 3),
                      'sampler_on_p99_ms': round(p_on, 3), 'p99_ratio': round(p_on / p_off, 4),
                      'repeats': args.repeats, 'seconds': args.seconds, 'connections': args.connections}))


if __name__ == '__main__':
    main()
