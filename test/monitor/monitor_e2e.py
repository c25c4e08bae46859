#!/usr/bin/env python3
"""End-to-end tests of `aiprof monitor` on loopback.

A real service (test/monitor/service.cc: TCP on 127.0.0.1, the aiprof SDK
around each request) runs under the load generator (test/monitor/load.cc).
Each case is bounded: short windows (1-2 s), intervals of 0.25 s, a timeout
on every process. The checks read the incident folders directly and the
traces through dump_capture's JSON lines (test/capture/dump_capture.cc).

Cases:
  slow       the service turns slow in planted_slow_path() (60 ms more per
             request) after 3 s, under `p99_latency > 40ms`: the
             alert fires within two windows, trace.aiprof holds slow requests
             from before and after the alert, its host samples and the
             diagnosis name planted_slow_path (uses perf: heavy).
  storm      an alert that keeps holding: one incident per --cooldown, at
             most --max-incidents.
  baseline   `p99_latency > 20 * baseline` against a baseline stored with
             aiprof set-baseline from the service's own trace.
  steady     no slowdown: many windows, no incident, exit 0.
  dies       the service exits (status 1) mid-window: a clear message, an
             incident with the flight recorder it wrote at exit, exit 3.
  metrics    --metrics-listen: /metrics in Prometheus's format with a hostile
             service name escaped; POST /alert (Alertmanager) starts an
             incident; a malformed webhook is a 400.
  badexpr    bad --alert expressions fail at start-up with the column.
  inprocess  AIPROF_MONITOR in the service's environment writes its flight
             recorder on a breach, with no monitor process; a malformed one
             is reported at start.
  python     a Python service using the aiprof package: a request left by an
             exception counts as an error; --on-alert dump.
  torch      a PyTorch service: the deep trace turns torch.profiler on in the
             running process through the SDK's control channel, and its ops
             land on the monitor's clock (heavy; skipped without torch).
"""
import argparse
import glob
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

FAILURES = []
STEP_TIMEOUT = 45


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what, flush=True)
    if not cond:
        FAILURES.append(what)


def wait_for_file(path, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            return True
        time.sleep(0.02)
    return False


def dump(args, path):
    out = subprocess.run([args.dump, path], check=True, capture_output=True, text=True, timeout=60).stdout
    recs = [json.loads(line) for line in out.splitlines()]
    slices = [r for r in recs if 'slice' in r]
    samples = [r for r in recs if 'sample' in r]
    meta = {r['meta']: r['value'] for r in recs if 'meta' in r}
    return slices, samples, meta


class Run:
    """The monitor running `service ARGS` (-- CMD form), and load on it."""

    def __init__(self, args, tmp, service_args, monitor_args, env=None, load_seconds=10, connections=4):
        self.port_file = os.path.join(tmp, 'port')
        self.marks = os.path.join(tmp, 'marks')
        self.out = os.path.join(tmp, 'incidents')
        cmd = [args.aiprof, 'monitor', '-o', self.out, *monitor_args, '--',
               args.service, '--port-file', self.port_file, '--marks-file', self.marks, *service_args]
        self.monitor = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        check(wait_for_file(self.port_file), 'service started and wrote its port')
        port = open(self.port_file).read().strip() if os.path.exists(self.port_file) else '0'
        self.load = subprocess.Popen([args.load, port, str(connections), str(load_seconds)],
                                     stdout=subprocess.PIPE, text=True)

    def finish(self, timeout=STEP_TIMEOUT):
        try:
            out, err = self.monitor.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.monitor.kill()
            out, err = self.monitor.communicate()
            check(False, 'monitor finished within %d s' % timeout)
        try:
            self.load.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.load.kill()
        sys.stderr.write(err)
        return self.monitor.returncode, out, err

    def incidents(self):
        return sorted(d for d in glob.glob(os.path.join(self.out, '*-*')) if os.path.isdir(d))


def case_slow(args, tmp):
    window = 2.0
    run = Run(args, tmp, ['--slow-after', '3', '--slow-ms', '60', '--work-us', '300'],
              ['--alert', 'p99_latency > 40ms', '--alert', 'p90_latency > 40ms', '--window', '2s', '--interval', '0.25s',
               '--trace-duration', '2s', '--once', '--timeout', '25s'], load_seconds=14)
    rc, out, err = run.finish()
    check(rc == 3, 'exit status 3 after the first incident (got %d)' % rc)
    inc = run.incidents()
    check(len(inc) == 1, 'one incident folder (got %d)' % len(inc))
    check(len(out.strip().splitlines()) == 1 and 'incident 1' in out, 'one line on stdout: %r' % out.strip())
    if not inc:
        return
    d = inc[0]
    for f in ('alert.json', 'flight_recorder.aiprof', 'trace.aiprof', 'diagnosis.md', 'diagnosis.html'):
        check(os.path.exists(os.path.join(d, f)), 'incident has %s' % f)
    alert = json.load(open(os.path.join(d, 'alert.json')))
    check(alert['trigger']['expression'] == 'p99_latency > 40ms', 'alert.json names the expression')
    comp = alert['trigger']['comparisons'][0]
    check(comp['metric'] == 'p99_latency' and comp['value'] > 40e6 and comp['threshold'] == 40e6,
          'alert.json holds the value and threshold (%s)' % comp)
    check(alert['trigger']['window']['requests'] > 0 and 'latency_s' in alert['trigger']['window'],
          'alert.json holds the window statistics')
    during = [t['expression'] for t in alert['during_incident']]
    check(during == ['p90_latency > 40ms'], 'the second alert (p90, later than p99) is recorded in the same incident: %s' %
          during)
    slow_from = int(open(run.marks).read().split()[1])
    fired = int(alert['trigger']['monotonic_ns'])
    delay = (fired - slow_from) / 1e9
    check(0 <= delay <= 2 * window, 'fired %.2f s after the slowdown began (within two windows of %.0f s)' % (delay, window))
    slices, samples, meta = dump(args, os.path.join(d, 'trace.aiprof'))
    requests = [s for s in slices if s['slice'] == 'request']
    slow = [s for s in requests if s['dur'] > 50e6]
    before = [s for s in slow if s['ts'] + s['dur'] <= fired]
    after = [s for s in slow if s['ts'] >= fired]
    check(len(before) >= 5, 'trace.aiprof holds slow requests from before the alert (%d)' % len(before))
    check(len(after) >= 5, 'trace.aiprof holds slow requests from after the alert (%d)' % len(after))
    check(any(s['dur'] < 10e6 for s in requests if s['ts'] < slow_from),
          'and fast requests from before the slowdown (the flight recorder\'s lead-up)')
    leaf = {}
    for s in samples:
        if s['stack']:
            leaf[s['stack'][0][0]] = leaf.get(s['stack'][0][0], 0) + 1
    top = max(leaf, key=leaf.get) if leaf else None
    check(len(samples) > 100, 'deep trace has host samples (%d)' % len(samples))
    check(top == 'planted_slow_path', 'host samples point at planted_slow_path (top leaf: %s, %s)' %
          (top, sorted(leaf.items(), key=lambda kv: -kv[1])[:3]))
    md = open(os.path.join(d, 'diagnosis.md')).read()
    html = open(os.path.join(d, 'diagnosis.html')).read()
    check('hottest host function in the deep trace | planted\\_slow\\_path' in md or
          'hottest host function in the deep trace | planted_slow_path' in md, 'diagnosis.md names planted_slow_path')
    check('**Hottest host function**: planted\\_slow\\_path' in md, 'the diagnosis headline names planted_slow_path')
    check('planted_slow_path' in html, 'diagnosis.html names planted_slow_path')
    check(alert['deep_trace']['top_host_functions'][0]['function'] == 'planted_slow_path',
          'alert.json names planted_slow_path as the hottest host function')


def case_storm(args, tmp):
    run = Run(args, tmp, ['--slow-after', '0', '--slow-ms', '60', '--work-us', '300'],
              ['--alert', 'p99_latency > 40ms', '--window', '1s', '--interval', '0.25s', '--on-alert', 'none',
               '--cooldown', '1s', '--max-incidents', '2', '--timeout', '7s'], load_seconds=8)
    rc, out, err = run.finish()
    check(rc == 3, 'exit 3 (got %d)' % rc)
    check(len(run.incidents()) == 2, 'an alert that keeps holding makes one incident per cooldown, up to '
          '--max-incidents 2 (got %d)' % len(run.incidents()))
    check(len(out.strip().splitlines()) == 2, 'two lines on stdout')
    check(err.count('--max-incidents 2 reached') == 1, 'says once that --max-incidents is reached')
    if len(run.incidents()) == 2:
        a, b = (json.load(open(os.path.join(d, 'alert.json'))) for d in run.incidents())
        gap = (b['trigger']['monotonic_ns'] - a['trigger']['monotonic_ns']) / 1e9
        check(gap >= 1.0, 'the second incident starts after the cooldown (%.2f s later)' % gap)


def case_baseline(args, tmp):
    base = os.path.join(tmp, 'base.aiprof')
    env = dict(os.environ, AIPROF_OUTPUT=base)
    port_file = os.path.join(tmp, 'port0')
    svc = subprocess.Popen([args.service, '--port-file', port_file, '--die-after', '2.5', '--work-us', '300'], env=env)
    check(wait_for_file(port_file), 'baseline service started')
    subprocess.run([args.load, open(port_file).read().strip(), '2', '2'], capture_output=True, timeout=30)
    svc.wait(timeout=30)
    db = os.path.join(tmp, 'b.db')
    p = subprocess.run([args.aiprof, 'set-baseline', '--service', 'svc', '--trace', base, '--unit', 'request', '--db', db],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, 'baseline stored (%s)' % p.stderr.strip()[-200:])
    slices, _, _ = dump(args, base)
    lat = sorted(s['dur'] for s in slices if s['slice'] == 'request')
    p99 = lat[-(-99 * len(lat) // 100) - 1]  # nearest rank: ceil(0.99 n)
    run = Run(args, tmp, ['--slow-after', '2', '--slow-ms', '60', '--work-us', '300'],
              ['--alert', 'p99_latency > 20 * baseline', '--service', 'svc', '--db', db, '--window', '1s',
               '--interval', '0.25s', '--on-alert', 'none', '--once', '--timeout', '15s'], load_seconds=8)
    rc, out, err = run.finish()
    check(rc == 3, 'the slowdown crosses 20 x the stored baseline: exit 3 (got %d)' % rc)
    inc = run.incidents()
    if inc:
        comp = json.load(open(os.path.join(inc[0], 'alert.json')))['trigger']['comparisons'][0]
        check(abs(comp['threshold'] - 20 * p99) <= 1, 'threshold = 20 x the baseline\'s p99 (%d vs %d)' %
              (comp['threshold'], 20 * p99))
    p = subprocess.run([args.aiprof, 'monitor', '--alert', 'step_time_p99 > 1.2 * baseline', '--service', 'svc', '--db', db,
                        '-o', os.path.join(tmp, 'x'), '--', 'true'], capture_output=True, text=True, timeout=20)
    check(p.returncode == 1 and 'has no value for step_time_p99' in p.stderr,
          'a baseline of requests has no step times: a start-up error (%s)' % p.stderr.strip()[:200])


def case_steady(args, tmp):
    run = Run(args, tmp, ['--work-us', '300'],
              ['--alert', 'p99_latency > 40ms', '--alert', 'error_count > 0', '--window', '1s', '--interval', '0.25s',
               '--once', '--timeout', '6s'], load_seconds=8)
    rc, out, err = run.finish()
    check(rc == 0, 'no incident: exit status 0 (got %d)' % rc)
    check(run.incidents() == [], 'no incident folder')
    check(out.strip() == '', 'nothing on stdout')
    check('--timeout' in err and 'without an incident' in err, 'says the timeout passed without an incident')


def case_dies(args, tmp):
    run = Run(args, tmp, ['--die-after', '3', '--work-us', '300'],
              ['--alert', 'p99_latency > 1s', '--window', '2s', '--interval', '0.25s', '--timeout', '20s'],
              load_seconds=6)
    rc, out, err = run.finish()
    check(rc == 3, 'the service\'s death is an incident: exit 3 (got %d)' % rc)
    check(re.search(r'pid \d+ exit status 1', err) is not None, 'clear message on the exit: %r' %
          [l for l in err.splitlines() if 'exit' in l][:2])
    inc = run.incidents()
    check(len(inc) == 1, 'one incident folder (got %d)' % len(inc))
    if not inc:
        return
    alert = json.load(open(os.path.join(inc[0], 'alert.json')))
    check(alert['trigger']['kind'] == 'target_exited', 'alert.json: kind target_exited')
    fr = os.path.join(inc[0], 'flight_recorder.aiprof')
    check(os.path.exists(fr), 'the flight recorder is written')
    if os.path.exists(fr):
        slices, _, meta = dump(args, fr)
        n = sum(1 for s in slices if s['slice'] == 'request')
        check(n > 100, 'the flight recorder holds the requests before the death (%d)' % n)
        check(meta.get('sdk.mode') == 'ring', 'the service ran in ring mode (the monitor sets AIPROF_MODE=ring)')


def http(url, data=None, timeout=5):
    req = urllib.request.Request(url, data=data, headers={'Content-Type': 'application/json'} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def case_metrics(args, tmp):
    hostile = 'svc"}\nevil{x="1'
    run = Run(args, tmp, ['--work-us', '300'],
              ['--alert', 'p99_latency > 10s', '--window', '1s', '--interval', '0.25s', '--on-alert', 'none',
               '--metrics-listen', '127.0.0.1:0', '--service', hostile, '--once', '--timeout', '15s'], load_seconds=6)
    port = None
    deadline = time.monotonic() + 10
    err_lines = []
    while time.monotonic() < deadline and port is None:
        line = run.monitor.stderr.readline()
        err_lines.append(line)
        m = re.search(r'http://127\.0\.0\.1:(\d+)/metrics', line)
        if m:
            port = int(m.group(1))
    check(port is not None, 'the endpoint says where it listens')
    if port is None:
        run.finish()
        return
    time.sleep(1.5)
    status, body = http('http://127.0.0.1:%d/metrics' % port)
    check(status == 200, '/metrics answers 200')
    check(re.search(r'^aiprof_monitor_request_latency_seconds\{.*quantile="0.99"\} [0-9.e-]+$', body, re.M) is not None,
          '/metrics has the p99 latency')
    check(re.search(r'^aiprof_monitor_throughput_per_second\{.*\} [1-9][0-9.e+]*$', body, re.M) is not None,
          '/metrics has a non-zero throughput')
    escaped = 'service="svc\\"}\\nevil{x=\\"1"'
    check(escaped in body, 'the hostile service name is escaped in the labels')
    check(all(l.startswith('#') or re.match(r'^[a-z_]+\{[^\n]*\} \S+$', l) for l in body.strip().splitlines()),
          'every line is a comment or one sample')
    status, body = http('http://127.0.0.1:%d/alert' % port, data=b'{"alerts": 5')
    check(status == 400, 'a malformed webhook is a 400 (%d)' % status)
    hook = {'version': '4', 'status': 'firing', 'alerts': [
        {'status': 'firing', 'labels': {'alertname': 'HighLatency<script>'}},
        {'status': 'resolved', 'labels': {'alertname': 'Old'}}]}
    status, body = http('http://127.0.0.1:%d/alert' % port, data=json.dumps(hook).encode())
    check(status == 200 and body.startswith('1 firing'), 'the webhook is accepted (%d %r)' % (status, body))
    rc, out, err = run.finish()
    check(rc == 3, 'the webhook made an incident: exit 3 (got %d)' % rc)
    inc = run.incidents()
    check(len(inc) == 1, 'one incident folder')
    if inc:
        alert = json.load(open(os.path.join(inc[0], 'alert.json')))
        check(alert['trigger']['kind'] == 'webhook' and alert['trigger']['expression'] == 'HighLatency<script>',
              'alert.json: the webhook\'s alert name')
        check(sorted(os.listdir(inc[0])) == ['alert.json'], '--on-alert none writes alert.json only')


def case_badexpr(args, tmp):
    cases = [('p99_latency > 2', 'needs a unit'), ('p99_latency > 2.0s and', 'ends too early'),
             ('p99_latncy > 2s', "unknown metric 'p99_latncy'"), ('throughput < 50ms', 'does not fit'),
             ('step_time_p99 > 1.2 * baseline', 'give --service')]
    for expr, want in cases:
        p = subprocess.run([args.aiprof, 'monitor', '--alert', expr, '-o', os.path.join(tmp, 'x'), '--', 'true'],
                           capture_output=True, text=True, timeout=20)
        check(p.returncode != 0 and want in p.stderr, '--alert %r fails at start-up with %r (rc %d: %s)' %
              (expr, want, p.returncode, p.stderr.strip()[:200]))
    p = subprocess.run([args.aiprof, 'monitor', '--pid', '999999', '--alert', 'p99_latency > 1s', '-o',
                        os.path.join(tmp, 'y')], capture_output=True, text=True, timeout=20)
    check(p.returncode != 0 and 'no such process' in p.stderr, 'a missing pid is a clear error')
    p = subprocess.run([args.aiprof, 'monitor', '--alert', 'p99_latency > 1s', '--attach-timeout', '1s',
                        '-o', os.path.join(tmp, 'z'), '--', 'sleep', '5'], capture_output=True, text=True, timeout=20)
    check(p.returncode != 0 and 'does not use the aiprof SDK' in p.stderr,
          'a process without the SDK is a clear error (%s)' % p.stderr.strip()[:200])


def case_inprocess(args, tmp):
    env = dict(os.environ, AIPROF_MONITOR='p99_latency>40ms', AIPROF_MONITOR_WINDOW='1s',
               AIPROF_MONITOR_INTERVAL='250ms', AIPROF_MODE='ring', AIPROF_OUTPUT=os.path.join(tmp, 'svc.aiprof'))
    port_file = os.path.join(tmp, 'port')
    svc = subprocess.Popen([args.service, '--port-file', port_file, '--slow-after', '2', '--slow-ms', '60',
                            '--die-after', '6'],
                           stderr=subprocess.PIPE, text=True, env=env)
    check(wait_for_file(port_file), 'service started')
    load = subprocess.run([args.load, open(port_file).read().strip(), '4', '5'], capture_output=True, text=True, timeout=30)
    _, err = svc.communicate(timeout=30)
    sys.stderr.write(err)
    check('AIPROF_MONITOR "p99_latency>40ms" holds' in err, 'the SDK says its expression holds')
    files = glob.glob(os.path.join(tmp, 'svc-incident-*.aiprof'))
    check(len(files) == 1, 'one flight recorder written on the breach (cooldown keeps it to one): %s' % files)
    if files:
        slices, _, _ = dump(args, files[0])
        check(sum(1 for s in slices if s['slice'] == 'request' and s['dur'] > 50e6) > 0,
              'the in-process flight recorder holds the slow requests')
    env['AIPROF_MONITOR'] = 'p99_latency > 2'
    p = subprocess.run([args.service, '--port-file', os.path.join(tmp, 'port2'), '--die-after', '0.2'],
                       capture_output=True, text=True, env=env, timeout=20)
    check('AIPROF_MONITOR="p99_latency > 2"' in p.stderr and 'needs a unit' in p.stderr,
          'a malformed AIPROF_MONITOR is reported at start (%s)' % p.stderr.strip()[:200])


def case_python(args, tmp):
    out = os.path.join(tmp, 'incidents')
    # The request count guards against a rate over the first few requests.
    p = subprocess.run([args.aiprof, 'monitor', '--alert', 'error_rate > 5% and request_count > 100', '--window', '1s',
                        '--interval', '0.25s',
                        '--on-alert', 'dump', '--once', '--timeout', '15s', '-o', out, '--',
                        args.python, os.path.join(os.path.dirname(__file__), 'python_service.py'), args.python_dir, '8'],
                       capture_output=True, text=True, timeout=STEP_TIMEOUT)
    sys.stderr.write(p.stderr)
    check(p.returncode == 3, 'a Python service\'s errors (exceptions in `with aiprof.request`) fire the alert (rc %d)' %
          p.returncode)
    inc = sorted(glob.glob(os.path.join(out, '*-*')))
    check(len(inc) == 1, 'one incident')
    if inc:
        alert = json.load(open(os.path.join(inc[0], 'alert.json')))
        rate = [c for c in alert['trigger']['comparisons'] if c['metric'] == 'error_rate']
        check(rate and 0.07 <= rate[0]['value'] <= 0.13, 'error_rate is the 1 in 10 that raised (%s)' % rate)
        check(os.path.exists(os.path.join(inc[0], 'flight_recorder.aiprof')) and
              os.path.exists(os.path.join(inc[0], 'diagnosis.md')), '--on-alert dump: flight recorder and its diagnosis')


def case_torch(args, tmp):
    if subprocess.run([args.python, '-c', 'import torch'], capture_output=True).returncode != 0:
        print('skip: %s cannot import torch' % args.python)
        sys.exit(77)
    out = os.path.join(tmp, 'incidents')
    p = subprocess.run([args.aiprof, 'monitor', '--alert', 'p99_latency > 8ms', '--window', '1s', '--interval', '0.25s',
                        '--trace-duration', '2s', '--once', '--timeout', '40s', '-o', out, '--', args.python,
                        os.path.join(os.path.dirname(__file__), 'torch_service.py'), args.python_dir, '25', '4'],
                       capture_output=True, text=True, timeout=STEP_TIMEOUT + 30)
    sys.stderr.write(p.stderr)
    check(p.returncode == 3, 'the torch service\'s slowdown makes an incident (rc %d)' % p.returncode)
    inc = sorted(glob.glob(os.path.join(out, '*-*')))
    if not inc:
        check(False, 'an incident folder')
        return
    alert = json.load(open(os.path.join(inc[0], 'alert.json')))
    dt = alert['deep_trace']
    check(dt['framework_layer'].startswith('recorded (clock offset'), 'the framework layer was turned on through the '
          'SDK\'s control channel and aligned: %s' % dt['framework_layer'])
    slices, samples, meta = dump(args, os.path.join(inc[0], 'trace.aiprof'))
    start, end = int(dt['start_monotonic_ns']), int(dt['end_monotonic_ns'])
    mm = [s for s in slices if s['slice'] == 'aten::mm']
    check(len(mm) > 10, 'trace.aiprof holds torch ops (%d aten::mm)' % len(mm))
    inside = [s for s in mm if start - 1e9 <= s['ts'] <= end + 1e9]
    check(mm and len(inside) == len(mm), 'the torch ops lie in the deep trace\'s time (on the monitor\'s clock): %d of %d' %
          (len(inside), len(mm)))
    check(len(samples) > 50, 'and host samples (%d)' % len(samples))


CASES = {'slow': case_slow, 'storm': case_storm, 'baseline': case_baseline, 'steady': case_steady, 'dies': case_dies, 'metrics': case_metrics,
         'badexpr': case_badexpr, 'inprocess': case_inprocess, 'python': case_python,
         'torch': case_torch}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--aiprof', required=True)
    ap.add_argument('--dump', required=True)
    ap.add_argument('--service', required=True)
    ap.add_argument('--load', required=True)
    ap.add_argument('--python', default=sys.executable, help='interpreter for the Python service (with numpy)')
    ap.add_argument('--python-dir', help='the built aiprof package\'s parent folder (<build>/python)')
    ap.add_argument('case', choices=sorted(CASES))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix='aiprof-monitor-e2e-') as tmp:
        CASES[args.case](args, tmp)
    if FAILURES:
        print('%d check(s) failed' % len(FAILURES))
        sys.exit(1)


if __name__ == '__main__':
    main()
