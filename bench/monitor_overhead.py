#!/usr/bin/env python3
"""The cost of `aiprof monitor` to a service's throughput (README, "aiprof monitor").

Runs test/monitor/service.cc under test/monitor/load.cc on 127.0.0.1 for
--seconds, alternately without a monitor and with `aiprof monitor --pid`
attached (an alert that never fires, so no deep trace: the steady-state
cost of the live channel, the window and /proc reads), --repeats times
each, and prints the median throughput of both and the difference.

  bench/monitor_overhead.py --aiprof build/aiprof --service build/test/monitor_service \\
      --load build/test/monitor_load [--seconds 8] [--repeats 5] [--connections 4] [--work-us 100] [--window 60s]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def one_run(args, tmp, monitored):
    port_file = os.path.join(tmp, 'port')
    if os.path.exists(port_file):
        os.unlink(port_file)
    env = dict(os.environ, AIPROF_MODE='ring', AIPROF_OUTPUT=os.path.join(tmp, 'svc.aiprof'))
    svc = subprocess.Popen([args.service, '--port-file', port_file, '--work-us', str(args.work_us)], env=env)
    while not os.path.exists(port_file):
        time.sleep(0.01)
    mon = None
    if monitored:
        mon = subprocess.Popen([args.aiprof, 'monitor', '--pid', str(svc.pid), '--alert', 'p99_latency > 100s',
                                '--window', args.window, '--interval', '1s', '-o', os.path.join(tmp, 'incidents')],
                               stderr=subprocess.PIPE, text=True)
        line = mon.stderr.readline()  # "watching pid ..." once attached
        assert 'watching pid' in line, line
    time.sleep(0.5)
    out = subprocess.run([args.load, open(port_file).read().strip(), str(args.connections), str(args.seconds)],
                         capture_output=True, text=True, check=True).stdout
    if mon:
        mon.terminate()
        mon.wait(timeout=30)
    svc.terminate()
    svc.wait(timeout=30)
    return json.loads(out)['throughput']


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
    args = ap.parse_args()
    base, mon = [], []
    with tempfile.TemporaryDirectory(prefix='aiprof-monitor-bench-') as tmp:
        for i in range(args.repeats):
            # Alternate, so drift (thermal, other load) hits both sides alike.
            for monitored in ((False, True) if i % 2 == 0 else (True, False)):
                (mon if monitored else base).append(one_run(args, tmp, monitored))
                print('%s %.0f req/s' % ('monitored  ' if monitored else 'unmonitored', (mon if monitored else base)[-1]),
                      flush=True)
    b, m = statistics.median(base), statistics.median(mon)
    print(json.dumps({'unmonitored_req_per_s': round(b), 'monitored_req_per_s': round(m),
                      'change': round(m / b - 1, 4), 'repeats': args.repeats, 'seconds': args.seconds,
                      'connections': args.connections, 'work_us': args.work_us, 'window': args.window}))


if __name__ == '__main__':
    main()
