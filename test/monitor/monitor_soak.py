#!/usr/bin/env python3
"""Days of `aiprof monitor` pressed into minutes, on 127.0.0.1.

A real service (test/monitor/service.cc, the SDK around each request) under
test/monitor/load.cc, watched by `aiprof monitor` the way an SRE leaves it
running (a systemd unit that restarts it with its service), through
generations: each one starts the service and a monitor (`--pid` and
`-- CMD` in turn), runs phases of load with errors (an alert that holds, so
an incident every --cooldown), Alertmanager webhooks with new alert names
every time (label churn, and triggers during incidents), idle time, SDK
counter-name churn (--many-counters: more names than the live channel
holds), a wall-clock jump (an LD_PRELOAD shim, when given) and the live
segment removed from /dev/shm, then kills the service (a new pid next
time). A real Prometheus scrapes the monitor's fixed port throughout, when
installed. Every --sample seconds it writes one CSV row: the monitor's
VmRSS, open fds and threads, what INCIDENTS_DIR holds (bytes, files,
incident folders, the service's exit files), the series on /metrics and
the bytes the monitor wrote to stderr.

Used by monitor_e2e.py's `churn` case (a short run, count-based checks) and
by hand for the long trial (docs/monitor.md, "Limits"):

  monitor_soak.py --aiprof build/aiprof --service build/test/monitor_service \
      --load build/test/monitor_load --seconds 900 --generation 120 --work /tmp/soak --csv soak.csv
"""
import argparse
import glob
import json
import os
import re
import signal
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

INCIDENT_NAME = re.compile(r'^\d{8}T\d{6}Z-\d+(-\d+)?$')


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http(url, data=None, timeout=5):
    req = urllib.request.Request(url, data=data, headers={'Content-Type': 'application/json'} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except Exception:
        return 0, ''


def proc_stats(pid):
    """(VmRSS kB, open fds, threads) of pid; -1 each when gone."""
    try:
        rss = threads = -1
        for line in open('/proc/%d/status' % pid):
            if line.startswith('VmRSS:'):
                rss = int(line.split()[1])
            elif line.startswith('Threads:'):
                threads = int(line.split()[1])
        return rss, len(os.listdir('/proc/%d/fd' % pid)), threads
    except OSError:
        return -1, -1, -1


def disk(out):
    """(bytes, files, incident folders, service exit files, working folders) under out."""
    total = files = 0
    for root, _, names in os.walk(out):
        for n in names:
            try:
                total += os.lstat(os.path.join(root, n)).st_size
                files += 1
            except OSError:
                pass
    try:
        entries = os.listdir(out)
    except OSError:
        entries = []
    incidents = sum(1 for e in entries if INCIDENT_NAME.match(e))
    work = sum(1 for e in entries if e.startswith('.incident-'))
    service = len(glob.glob(os.path.join(out, '.service', '*')))
    return total, files, incidents, service, work


def metrics_values(body):
    """{sample name with labels: value} of an exposition."""
    out = {}
    for line in body.splitlines():
        if line and not line.startswith('#'):
            k, _, v = line.rpartition(' ')
            out[k] = v
    return out


def metric(values, name):
    """Sum of the samples named `name` (any labels); -1 when absent."""
    found = [float(v) for k, v in values.items() if k == name or k.startswith(name + '{')]
    return sum(found) if found else -1


class Soak:
    def __init__(self, args):
        self.a = args
        os.makedirs(args.work, exist_ok=True)
        self.out = os.path.join(args.work, 'incidents')
        self.logs = os.path.join(args.work, 'logs')
        os.makedirs(self.logs, exist_ok=True)
        self.clock_file = os.path.join(args.work, 'clock_offset_s')
        open(self.clock_file, 'w').write('0\n')
        self.port = args.metrics_port or free_port()
        self.monitor = None
        self.service_pid = 0
        self.stop = threading.Event()
        self.rows = []
        self.generations = []  # per generation: rc, pid, last /metrics values, stderr
        self.last_metrics = {}
        self.max_series = 0
        self.stderr_bytes_done = 0
        self.stderr_path = None
        self.webhooks_sent = 0
        self.t0 = time.monotonic()
        self.prometheus = None
        self.prefilled = False

    # -- the sampler ---------------------------------------------------
    def sample_once(self, gen):
        mon = self.monitor
        pid = mon.pid if mon and mon.poll() is None else 0
        rss, fds, threads = proc_stats(pid) if pid else (-1, -1, -1)
        total, files, incidents, service, work = disk(self.out)
        status, body = http('http://127.0.0.1:%d/metrics' % self.port, timeout=3) if pid else (0, '')
        series = -1
        if status == 200:
            values = metrics_values(body)
            series = len(values)
            self.max_series = max(self.max_series, series)
            self.last_metrics = values
        err_bytes = self.stderr_bytes_done + (os.path.getsize(self.stderr_path) if self.stderr_path and
                                               os.path.exists(self.stderr_path) else 0)
        row = dict(t=round(time.monotonic() - self.t0, 1), gen=gen, monitor_pid=pid, rss_kb=rss, fds=fds,
                   threads=threads, disk_bytes=total, disk_files=files, incident_dirs=incidents,
                   service_files=service, work_dirs=work, series=series, stderr_bytes=err_bytes,
                   incidents_total=metric(self.last_metrics, 'aiprof_monitor_incidents_total') if status == 200 else -1,
                   pruned_total=metric(self.last_metrics, 'aiprof_monitor_incidents_pruned_total') if status == 200
                   else -1)
        self.rows.append(row)
        if self.a.csv:
            new = not os.path.exists(self.a.csv)
            with open(self.a.csv, 'a') as f:
                if new:
                    f.write(','.join(row) + '\n')
                f.write(','.join(str(v) for v in row.values()) + '\n')
        if self.a.verbose:
            print('sample', json.dumps(row), flush=True)

    def sampler(self):
        while not self.stop.wait(self.a.sample):
            self.sample_once(self.gen)

    # -- Prometheus ------------------------------------------------------
    def start_prometheus(self):
        prom = shutil.which('prometheus')
        if not prom or self.a.no_prometheus:
            return
        cfg = os.path.join(self.a.work, 'prometheus.yml')
        open(cfg, 'w').write('global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: aiprof\n'
                             '    static_configs:\n      - targets: ["127.0.0.1:%d"]\n' % self.port)
        self.prom_port = free_port()
        self.prometheus = subprocess.Popen(
            [prom, '--config.file=' + cfg, '--storage.tsdb.path=' + os.path.join(self.a.work, 'tsdb'),
             '--web.listen-address=127.0.0.1:%d' % self.prom_port, '--log.level=error'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def prometheus_summary(self):
        if not self.prometheus:
            return None
        api = 'http://127.0.0.1:%d/api/v1/query?query=' % self.prom_port
        out = {}
        for name, q in (('series_of_job', 'count({job="aiprof"})'),
                        ('up_samples', 'count_over_time(up{job="aiprof"}[1h])'),
                        ('up_ones', 'sum_over_time(up{job="aiprof"}[1h])'),
                        ('requests_increase', 'increase(aiprof_monitor_requests_total[1h])')):
            status, body = http(api + urllib.request.quote(q))
            try:
                res = json.loads(body)['data']['result']
                out[name] = float(res[0]['value'][1]) if res else None
            except Exception:
                out[name] = None
        return out

    def requests_total(self):
        status, body = http('http://127.0.0.1:%d/metrics' % self.port, timeout=3)
        return metric(metrics_values(body), 'aiprof_monitor_requests_total') if status == 200 else -1

    # -- a generation ----------------------------------------------------
    def webhook(self, names):
        hook = {'alerts': [{'status': 'firing', 'labels': {'alertname': n}} for n in names]}
        status, _ = http('http://127.0.0.1:%d/alert' % self.port, data=json.dumps(hook).encode(), timeout=3)
        self.webhooks_sent += len(names) if status == 200 else 0

    def start(self, gen, seconds):
        port_file = os.path.join(self.a.work, 'port-%d' % gen)
        svc = [self.a.service, '--port-file', port_file, '--work-us', str(self.a.work_us)]
        if gen % 3 == 2:  # this one ends by itself (exit status 1: the SDK writes its exit file)
            svc += ['--die-after', '%.1f' % (0.87 * seconds)]
        if gen % 2 == 1:
            svc += ['--many-counters', '1']
        env = dict(os.environ, AIPROF_CALIBRATE='0', AIPROF_MODE='ring', AIPROF_RING_MB='1')
        if self.a.clock_shim:
            env.update(LD_PRELOAD=self.a.clock_shim, CLOCKSHIM_FILE=self.clock_file)
        mon = [self.a.aiprof, 'monitor', '-o', self.out, '--alert', 'error_rate > 20%',
               '--window', '2s', '--interval', '0.25s', '--cooldown', self.a.cooldown, '--max-incidents', '0',
               '--trace-duration', self.a.trace_duration, '--on-alert', self.a.on_alert, '--cpu-hz', '199',
               '--metrics-listen', '127.0.0.1:%d' % self.port, '--service', 'soak', *self.a.monitor_arg]
        self.stderr_path = os.path.join(self.logs, 'monitor-%d.stderr' % gen)
        err = open(self.stderr_path, 'w')
        outf = open(os.path.join(self.logs, 'monitor-%d.stdout' % gen), 'w')
        if gen % 2 == 0:  # --pid (the systemd unit's way)
            svc_env = dict(env, AIPROF_OUTPUT=os.path.join(self.out, '.service') + '/')
            os.makedirs(os.path.join(self.out, '.service'), exist_ok=True)
            self.svc = subprocess.Popen(svc, env=svc_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.service_pid = self.svc.pid
            time.sleep(0.2)
            self.monitor = subprocess.Popen(mon[:2] + ['--pid', str(self.svc.pid)] + mon[2:], env=env, stdout=outf,
                                            stderr=err)
        else:  # -- CMD
            self.svc = None
            self.monitor = subprocess.Popen(mon + ['--'] + svc, env=env, stdout=outf, stderr=err)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not os.path.exists(port_file):
            time.sleep(0.05)
        if self.svc is None:
            try:
                kids = open('/proc/%d/task/%d/children' % (self.monitor.pid, self.monitor.pid)).read().split()
                self.service_pid = int(kids[0]) if kids else 0
            except OSError:
                self.service_pid = 0
        return int(open(port_file).read()) if os.path.exists(port_file) else 0

    def load(self, port, seconds, error_every):
        return subprocess.Popen([self.a.load, str(port), str(self.a.connections), str(seconds), str(error_every)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def phase(self, seconds, port=0, errors=0, hook_every=0.0, hook_names=0, gen=0):
        end = time.monotonic() + seconds
        load = self.load(port, seconds, errors) if port else None
        n = 0
        while time.monotonic() < end and not self.stop.is_set():
            if hook_every:
                n += 1
                self.webhook(['g%d-churn-%d-%d' % (gen, n, i) for i in range(hook_names)])
                time.sleep(hook_every)
            else:
                time.sleep(min(0.5, max(0.0, end - time.monotonic())))
        if load:
            try:
                load.wait(timeout=30)
            except subprocess.TimeoutExpired:
                load.kill()

    def generation(self, gen, seconds):
        self.gen = gen
        port = self.start(gen, seconds)
        g = seconds
        # Load with errors (the alert holds: an incident every cooldown) and
        # webhooks with new names every time (during incidents: recorded).
        self.phase(0.35 * g, port, errors=2, hook_every=0.2, hook_names=self.a.hook_names, gen=gen)
        self.phase(0.20 * g)  # idle: no request, no webhook
        if self.a.clock_shim:  # the wall clock jumps a day back (odd) or forward (even)
            open(self.clock_file, 'w').write('%d\n' % (-86400 if gen % 2 else 86400))
        seg = '/dev/shm/aiprof-live-%d' % self.service_pid
        removed = os.path.exists(seg)
        if removed:  # removed under both (systemd RemoveIPC=, a tmp cleaner)
            os.unlink(seg)
        self.phase(0.05 * g)
        before = self.requests_total()
        self.phase(0.25 * g, port, errors=0, hook_every=1.0, hook_names=2, gen=gen)
        time.sleep(1)
        after = self.requests_total()
        open(self.clock_file, 'w').write('0\n')
        # The service goes away (a new pid next time): SIGKILL, SIGTERM, or
        # its own exit(1) in turn.
        if gen % 3 != 2:
            try:
                os.kill(self.service_pid, (signal.SIGKILL, signal.SIGTERM)[gen % 3])
            except OSError:
                pass
        try:
            rc = self.monitor.wait(timeout=max(60, 0.15 * g))
        except subprocess.TimeoutExpired:
            self.monitor.kill()
            rc = self.monitor.wait()
        if self.svc:
            self.svc.wait()
        self.sample_once(gen)
        self.stderr_bytes_done += os.path.getsize(self.stderr_path)
        self.generations.append(dict(gen=gen, rc=rc, pid=self.service_pid, metrics=dict(self.last_metrics),
                                     segment_removed=removed, requests_after_removal=after - before,
                                     stderr=open(self.stderr_path).read()))
        self.stderr_path = None
        self.monitor = None

    def prefill(self):
        """Incident folders left by earlier monitors (a year old), so that the
        retention limits are reached in minutes: --prefill small ones, and one
        holding a sparse file of --prefill-sparse-gib (no disk used)."""
        os.makedirs(self.out, exist_ok=True)
        if self.prefilled:
            return
        self.prefilled = True
        for i in range(self.a.prefill):
            d = os.path.join(self.out, '20250101T%06dZ-%d' % (i, i + 1))
            os.makedirs(d, exist_ok=True)
            open(os.path.join(d, 'alert.json'), 'w').write('{}\n')
        if self.a.prefill_sparse_gib:
            d = os.path.join(self.out, '20241231T000000Z-1')
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, 'trace.aiprof'), 'wb') as f:
                f.truncate(int(self.a.prefill_sparse_gib * (1 << 30)))

    def run(self):
        self.prefill()
        self.start_prometheus()
        self.gen = 0
        t = threading.Thread(target=self.sampler, daemon=True)
        t.start()
        deadline = time.monotonic() + self.a.seconds
        gen = 0
        while time.monotonic() < deadline:
            left = deadline - time.monotonic()
            g = self.a.first_generation if gen == 0 and self.a.first_generation else self.a.generation
            if left < 0.5 * g:
                break
            self.generation(gen, min(g, left))
            gen += 1
        self.stop.set()
        t.join()
        summary = self.prometheus_summary()
        if self.prometheus:
            self.prometheus.terminate()
            self.prometheus.wait(timeout=20)
        return summary


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--aiprof', required=True)
    ap.add_argument('--service', required=True)
    ap.add_argument('--load', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--seconds', type=float, default=60)
    ap.add_argument('--generation', type=float, default=30, help='seconds per service/monitor life')
    ap.add_argument('--first-generation', type=float, default=0, help='a longer first life (RSS per incident)')
    ap.add_argument('--sample', type=float, default=2.0)
    ap.add_argument('--csv')
    ap.add_argument('--connections', type=int, default=4)
    ap.add_argument('--work-us', type=int, default=50)
    ap.add_argument('--hook-names', type=int, default=20, help='new alert names per webhook post')
    ap.add_argument('--cooldown', default='1s')
    ap.add_argument('--trace-duration', default='1s')
    ap.add_argument('--on-alert', default='trace')
    ap.add_argument('--metrics-port', type=int, default=0)
    ap.add_argument('--clock-shim', help='an LD_PRELOAD library offsetting CLOCK_REALTIME by $CLOCKSHIM_FILE seconds')
    ap.add_argument('--no-prometheus', action='store_true')
    ap.add_argument('--monitor-arg', action='append', default=[], help='more monitor options (repeat)')
    ap.add_argument('--prefill', type=int, default=0, help='old incident folders in INCIDENTS_DIR at the start')
    ap.add_argument('--prefill-sparse-gib', type=float, default=0, help='one old folder holding a sparse file this big')
    ap.add_argument('--verbose', action='store_true')
    return ap.parse_args(argv)


def main():
    a = parse()
    s = Soak(a)
    summary = s.run()
    for g in s.generations:
        print('generation %d: pid %d, monitor exit %d, incidents_total %s, stderr %d lines, requests counted '
              'after the live segment was removed: %d' %
              (g['gen'], g['pid'], g['rc'], metric(g['metrics'], 'aiprof_monitor_incidents_total'),
               g['stderr'].count('\n'), g['requests_after_removal']))
    print('max series on /metrics: %d; webhook alerts sent: %d' % (s.max_series, s.webhooks_sent))
    print('prometheus:', json.dumps(summary))
    last = s.rows[-1] if s.rows else {}
    print('last sample:', json.dumps(last))


if __name__ == '__main__':
    main()
