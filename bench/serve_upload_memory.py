#!/usr/bin/env python3
"""Peak RSS of `aiprof serve` while it receives uploads (POST /api/runs),
issue #29: the body is written to disk as it arrives, so the server's
memory should not grow with the upload's size. Sends N parallel uploads of
SIZE MiB each (the body is 'x' bytes, not a trace: its run fails at the
first byte, so no import adds to the figure), sampling the server's VmRSS
every 50 ms and reading its VmHWM (peak) before and after.

  python3 bench/serve_upload_memory.py --aiprof build/aiprof --mb 500 --parallel 1
  python3 bench/serve_upload_memory.py --aiprof build/aiprof --mb 125 --parallel 4
"""
import argparse
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time


def status_kb(pid, key):
    for line in open("/proc/%d/status" % pid):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return -1


def upload(port, i, size, piece, out):
    s = socket.create_connection(("127.0.0.1", port), timeout=300)
    s.sendall(b"POST /api/runs?name=bench%d.json HTTP/1.1\r\nHost: b\r\nContent-Length: %d\r\n\r\n" % (i, size))
    sent = 0
    while sent < size:
        n = min(len(piece), size - sent)
        s.sendall(piece[:n])
        sent += n
    out[i] = s.recv(4096).split(b"\r\n")[0].decode()
    s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--mb", type=int, default=500)
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--tmp", default="/tmp")
    a = ap.parse_args()
    logdir = tempfile.mkdtemp(prefix="aiprof_upload_bench_", dir=a.tmp)
    p = subprocess.Popen([a.aiprof, "serve", "--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                          "--max-upload-mb", str(a.mb + 1)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        port = int(re.search(r":(\d+)/", p.stderr.readline()).group(1))
        threading.Thread(target=p.stderr.read, daemon=True).start()
        time.sleep(0.5)
        before = status_kb(p.pid, "VmHWM")
        size = a.mb << 20
        piece = b"x" * (1 << 20)
        answers, samples = {}, []
        threads = [threading.Thread(target=upload, args=(port, i, size, piece, answers)) for i in range(a.parallel)]
        start = time.time()
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            samples.append(status_kb(p.pid, "VmRSS"))
            time.sleep(0.05)
        for t in threads:
            t.join()
        took = time.time() - start
        after = status_kb(p.pid, "VmHWM")
        print("uploads: %d x %d MiB in %.1f s (%.0f MB/s), answers %s" %
              (a.parallel, a.mb, took, a.parallel * size / 1e6 / took, sorted(set(answers.values()))))
        print("server peak RSS (VmHWM): %.1f MB before, %.1f MB after (+%.1f MB); VmRSS sampled during: max %.1f MB" %
              (before / 1e3, after / 1e3, (after - before) / 1e3, max(samples or [0]) / 1e3))
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()
        shutil.rmtree(logdir, ignore_errors=True)


if __name__ == "__main__":
    main()
