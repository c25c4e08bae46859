#!/usr/bin/env python3
"""Peak memory and time of importing one trace, two aiprof builds interleaved.

Runs `aiprof import INPUT -o OUT.aiprof` (or another command, --cmd; INPUT
may be a folder, e.g. two ranks' traces, which are merged) with the
BEFORE and the AFTER binary in turn, ROUNDS times, and prints per build the
median wall time, the peak RSS (the kernel's ru_maxrss of the child), and
what the peak was made of, read from /proc/PID/smaps_rollup every few
milliseconds while it ran: anonymous memory (the heap: columns, strings,
importer buffers) and file-backed pages (the mapped input, the binary),
taken at the sample where RSS was highest. Then the ratios AFTER/BEFORE.

Usage:
  bench/import_memory.py --before OLD/aiprof --after NEW/aiprof --input big.aiprof [--rounds 5]
      [--cmd 'import {input} -o {out}'] [--interval-ms 5]

An SDK event file to read: `AIPROF_OUTPUT=big.aiprof LD_LIBRARY_PATH=build
build/test/sdk_c_program threads 4 3375000` (13.5 M spans, 432 MB).
"""
import argparse
import os
import shlex
import statistics
import subprocess
import tempfile
import time


def rollup(pid):
    """Rss, Anonymous and file-backed kB of `pid`, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            text = f.read()
    except OSError:
        return None
    v = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
            v[parts[0][:-1]] = int(parts[1])
    if "Rss" not in v:
        return None
    anon = v.get("Anonymous", 0)
    return v["Rss"], anon, v["Rss"] - anon - v.get("Shmem", 0)


def run_once(binary, cmd, interval_s):
    env = dict(os.environ, AIPROF_CALIBRATE="0")
    start = time.monotonic()
    p = subprocess.Popen([binary] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    best = (0, 0, 0)
    while True:
        r = rollup(p.pid)
        if r is not None and r[0] > best[0]:
            best = r
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid != 0:
            break
        time.sleep(interval_s)
    wall = time.monotonic() - start
    err = p.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{binary} {' '.join(cmd)} failed:\n{err}")
    return {"wall_s": wall, "maxrss_kb": usage.ru_maxrss, "anon_kb": best[1], "file_kb": best[2],
            "sampled_rss_kb": best[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cmd", default="import {input} -o {out}")
    ap.add_argument("--interval-ms", type=float, default=5)
    a = ap.parse_args()
    builds = {"before": os.path.abspath(a.before), "after": os.path.abspath(a.after)}
    results = {k: [] for k in builds}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("XDG_CONFIG_HOME", os.path.join(tmp, "config"))
        os.environ.setdefault("XDG_DATA_HOME", os.path.join(tmp, "data"))
        for root, _, files in os.walk(a.input) if os.path.isdir(a.input) else [("", None, [a.input])]:
            for name in files:  # warm the page cache
                with open(os.path.join(root, name), "rb") as f:
                    while f.read(1 << 24):
                        pass
        for r in range(a.rounds):
            order = list(builds) if r % 2 == 0 else list(reversed(builds))
            for name in order:
                out = os.path.join(tmp, f"{name}.aiprof")
                cmd = shlex.split(a.cmd.format(input=a.input, out=out))
                results[name].append(run_once(builds[name], cmd, a.interval_ms / 1000))
                if os.path.exists(out):
                    os.remove(out)
    print(f"{a.cmd.format(input=os.path.basename(a.input), out='OUT')}: {a.rounds} interleaved rounds, medians"
          " (peak RSS: ru_maxrss; anon/file: the smaps_rollup sample with the highest RSS)")
    print(f"{'build':8} {'wall_s':>8} {'peak_MB':>9} {'anon_MB':>9} {'file_MB':>9}  walls")
    med = {}
    for name in builds:
        rs = results[name]
        m = {k: statistics.median(x[k] for x in rs) for k in rs[0]}
        med[name] = m
        walls = " ".join(f"{x['wall_s']:.2f}" for x in rs)
        print(f"{name:8} {m['wall_s']:8.2f} {m['maxrss_kb'] / 1000:9.1f} {m['anon_kb'] / 1000:9.1f}"
              f" {m['file_kb'] / 1000:9.1f}  {walls}")
    b, n = med["before"], med["after"]
    ratio = lambda k: n[k] / b[k] if b[k] else float("nan")
    print(f"{'ratio':8} {ratio('wall_s'):8.3f} {ratio('maxrss_kb'):9.3f} {ratio('anon_kb'):9.3f}"
          f" {ratio('file_kb'):9.3f}")


if __name__ == "__main__":
    main()
