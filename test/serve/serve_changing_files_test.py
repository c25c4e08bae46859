#!/usr/bin/env python3
"""`aiprof serve` over a logdir whose files change while they are converted,
the real server on loopback. A file truncated (or grown) under the converter
fails alone, its error shown for it (API and page), while the server goes on
answering and serving the other runs; once the file is whole again the next
scan converts it again. A FIFO or a device named like a trace is listed as a
failed run saying what it is (never opened: a FIFO would block the server);
symbolic links are not followed; a writer's temporary file
(`<name>.tmp.<boot>-<pid>.XXXXXX`, importable before its rename) is never
listed, and a file removed between scans leaves the list (docs/serve.md).

The inputs are made here: a trace of many small ops (string formatting, a few
seconds), imported once into an .aiprof, which serve reads in place through a
mapping; the conversion is slow by the input's size, not by any pause in the
product. An .aiprof truncated after its import (while the report read its
mapping) ended the whole server (SIGBUS, then "the file shrank while it was
read", exit 1).

  serve_changing_files_test.py --aiprof build/aiprof
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_e2e_test import FAILURES, check, http, rows, start, stop, tiny_trace  # noqa: E402


def many_ops_trace(path, n):
    """Hand-made: n complete ops on 4 threads, one event per line."""
    with open(path, "w") as f:
        f.write('{"traceEvents":[\n')
        for i in range(n):
            f.write('{"ph":"X","cat":"cpu_op","name":"op_%d","pid":1,"tid":%d,"ts":%d,"dur":3},\n'
                    % (i % 97, i % 4, (i // 4) * 5))
        f.write('{"ph":"X","cat":"cpu_op","name":"last","pid":1,"tid":0,"ts":%d,"dur":1}\n]}\n' % (n * 2))


def row_of(port, name):
    try:
        listed = rows(port)
    except OSError:
        return None
    for r in listed:
        if r["name"] == name:
            return r
    return None


def wait_state(p, port, name, states, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline and p.poll() is None:
        try:
            r = row_of(port, name)
        except OSError:
            return None
        if r and r["state"] in states:
            return r
        time.sleep(0.005)
    return None


def get(port, path, method="GET"):
    """http(), with a server that ended (the defect this test is about) as
    status 0 instead of an exception."""
    try:
        return http(port, path, method=method, body=b"" if method == "POST" else None)[:2]
    except OSError as e:
        return 0, str(e)


def rescan(port):
    return get(port, "/api/rescan", method="POST")[0]


def changed_under_converter(p, port, path, whole, delay_s, cut_to, what):
    """Queues `path` again (written whole), waits for its conversion to
    start, waits `delay_s`, truncates it to `cut_to` bytes; the server must
    go on, the run must end failed naming the file (or ready, when the
    conversion had already read all it needs), and once whole again the
    next scan converts it again."""
    name = os.path.basename(path)
    with open(path, "wb") as f:
        f.write(whole)
    rescan(port)
    started = wait_state(p, port, name, ("converting",))
    check(started is not None, "%s: its conversion starts" % what)
    time.sleep(delay_s)
    os.truncate(path, cut_to)
    end = wait_state(p, port, name, ("ready", "failed"))
    check(p.poll() is None, "%s: the server is still running (exit status %s)" % (what, p.poll()))
    if p.poll() is not None:
        return
    check(end is not None, "%s: the conversion ends" % what)
    if end and end["state"] == "failed":
        check(name in end.get("error", "") and "cache" not in end.get("error", ""),
              "%s: failed naming the file, not the server's cache: %s" % (what, end.get("error", "")[:300]))
    s, _ = get(port, "/")
    check(s == 200, "%s: the runs list answers" % what)
    other = row_of(port, "other.json")
    check(other is not None and other["state"] == "ready", "%s: the other run is still ready" % what)
    s, page = get(port, "/runs/%d" % other["id"]) if other else (0, "")
    check(s == 200 and "op_other" in page, "%s: the other run's page is served" % what)
    # The truncated file, whatever the conversion read of it: the next scan
    # sees it changed, and it fails naming the file.
    rescan(port)
    time.sleep(0.2)
    end = wait_state(p, port, name, ("failed",), timeout=30)
    check(end is not None and name in end.get("error", ""),
          "%s: the truncated file is a failed run naming it: %s" % (what, end and end.get("error", "")[:200]))
    if end:
        s, body = get(port, "/api/runs/%d" % end["id"])
        check(s == 409 and name in body, "%s: the API answers 409 with the error: %s" % (what, body.strip()[:200]))
        s, page = get(port, "/runs/%d" % end["id"])
        check(s == 200 and 'id="run-error"' in page and name in page, "%s: the run's page shows the error" % what)
    with open(path, "wb") as f:
        f.write(whole)
    rescan(port)
    time.sleep(0.2)
    end = wait_state(p, port, name, ("ready",), timeout=60)
    check(end is not None, "%s: written whole again, it is converted again and ready" % what)


def listed_paths(port):
    try:
        return [r["path"] for r in rows(port)]
    except OSError:
        return []


def scanned_with(p, port, logdir, marker):
    """Writes a small trace `marker`, asks for a scan and waits until the
    marker is converted: the scan that found it (and everything present
    before it was written) is over. A scan of this logdir takes
    milliseconds; the conversion waits for the scan's Notify."""
    with open(os.path.join(logdir, marker), "wb") as f:
        f.write(tiny_trace(marker.split(".")[0], 5))
    rescan(port)
    return wait_state(p, port, marker, ("ready", "failed"), timeout=30) is not None


def writer_temporaries(p, port, logdir, native_bytes, json_bytes):
    """A writer's temporary in the logdir is not a run. Every writer of
    aiprof (AtomicFileWriter: `-o`, aiprof import; the SDK's event file; the
    monitor's incident folder) writes `<target>.tmp.<boot>-<pid>.XXXXXX` and
    renames it onto its target; the first bytes are importable before the
    rename, so a scan in that window indexed the temporary as a run of its
    own, which stayed listed after the rename (trial_races, finding C: 7 of
    10 traces under a client rescanning every 5 ms). Here the window is held
    open: the temporaries exist for a whole scan, then one is renamed."""
    boot = open("/proc/sys/kernel/random/boot_id").read()[:8]
    pid = os.getpid()  # a live writer: nothing sweeps these away meanwhile
    temps = {
        "tmprun.aiprof.tmp.%s-%d.Xy12Zq" % (boot, pid): native_bytes,   # aiprof trace -o, aiprof import -o
        "events.aiprof.tmp.%s-%d.Ab34Cd" % (boot, pid): native_bytes,   # the SDK's event file (same form)
        "tmprun.json.tmp.%s-%d.Cd56Ef" % (boot, pid): json_bytes,
        "old.aiprof.tmp.Qw56Er": native_bytes,                          # an earlier version's form
    }
    for name, data in temps.items():
        with open(os.path.join(logdir, name), "wb") as f:
            f.write(data)
    folder = "incident.tmp.%s-%d.Fo78Ld" % (boot, pid)  # a monitor incident folder being filled
    os.makedirs(os.path.join(logdir, folder))
    with open(os.path.join(logdir, folder, "rank0.json"), "wb") as f:
        f.write(json_bytes)
    check(scanned_with(p, port, logdir, "after_temps.json"), "writer temporaries: a scan with them present ends")
    time.sleep(0.5)  # a converter that took a temporary would list it as converting by now
    listed = listed_paths(port)
    check(not any(".tmp." in path for path in listed),
          "writer temporaries present during a scan are not listed as runs: %s"
          % [path for path in listed if ".tmp." in path])
    # The writer's rename: the target is one run, and no temporary stays.
    target = os.path.join(logdir, "renamed.aiprof")
    os.rename(os.path.join(logdir, "tmprun.aiprof.tmp.%s-%d.Xy12Zq" % (boot, pid)), target)
    rescan(port)
    end = wait_state(p, port, "renamed.aiprof", ("ready", "failed"), timeout=30)
    check(end is not None and end["state"] == "ready", "the renamed target is a run, ready")
    listed = listed_paths(port)
    check(listed.count("renamed.aiprof") == 1 and not any(".tmp." in path for path in listed),
          "after the rename: the target listed once, no temporary: %s" % listed)
    for name in temps:
        if os.path.exists(os.path.join(logdir, name)):
            os.remove(os.path.join(logdir, name))
    shutil.rmtree(os.path.join(logdir, folder))


def wait_unlisted(p, port, path, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline and p.poll() is None:
        if path not in listed_paths(port):
            return True
        time.sleep(0.02)
    return False


def removed_between_scans(p, port, logdir):
    """A run whose file is removed leaves the list at the next scan, with
    its cache files; its id answers 404 (API and page). Before, nothing but
    an upload's DELETE removed a row: a removed file (or a writer's
    temporary renamed away) stayed listed for good. An upload whose file is
    there stays through scans and is deleted through the API as before; a
    removed file written again is a run again."""
    cache = os.path.join(logdir, ".aiprof-serve", "cache")
    path = os.path.join(logdir, "removed.json")
    with open(path, "wb") as f:
        f.write(tiny_trace("removed", 20))
    rescan(port)
    end = wait_state(p, port, "removed.json", ("ready",), timeout=30)
    check(end is not None, "removed.json: converted before its removal")
    if end is None:
        return
    rid = end["id"]
    cached = [os.path.join(cache, "%d.aiprof" % rid), os.path.join(cache, "%d.run" % rid)]
    check(all(os.path.exists(c) for c in cached), "removed.json: its cache files exist")
    os.remove(path)
    check(scanned_with(p, port, logdir, "after_removal.json"), "removed.json: a scan after its removal ends")
    check(wait_unlisted(p, port, "removed.json"), "a file removed between scans leaves the list: %s" % listed_paths(port))
    s, body = get(port, "/api/runs/%d" % rid)
    check(s == 404, "its id answers 404 in the API: %s %s" % (s, " ".join(body.split())[:200]))
    s, _ = get(port, "/runs/%d" % rid)
    check(s == 404, "its page answers 404: %s" % s)
    check(not any(os.path.exists(c) for c in cached), "its cache files are removed")
    # An upload is a file of the logdir too: kept while it is there, and
    # deleted through the API as before.
    s, body = http(port, "/api/runs?name=kept_upload.json", "POST", tiny_trace("upload", 10))[:2]
    check(s == 202, "an upload is accepted: %s %s" % (s, body.strip()[:200]))
    up = json.loads(body)["id"] if s == 202 else 0
    end = wait_state(p, port, "kept_upload.json", ("ready",), timeout=30)
    check(end is not None and end["id"] == up, "the upload is converted")
    check(scanned_with(p, port, logdir, "after_upload.json"), "a scan after the upload ends")
    check(row_of(port, "kept_upload.json") is not None, "the upload stays listed through a scan")
    s, body = get(port, "/api/runs/%d" % up, method="DELETE")
    check(s == 200 and '"deleted": true' in body, "DELETE /api/runs/ID removes the upload: %s %s" % (s, body[:200]))
    check(row_of(port, "kept_upload.json") is None, "the deleted upload is not listed")
    # Written again: a run again.
    with open(path, "wb") as f:
        f.write(tiny_trace("removed", 20))
    rescan(port)
    end = wait_state(p, port, "removed.json", ("ready",), timeout=30)
    check(end is not None, "removed.json written again is a run again, ready")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--events", type=int, default=400_000)
    a = ap.parse_args()
    exe = os.path.abspath(a.aiprof)
    tmp = tempfile.mkdtemp(prefix="aiprof_serve_changing_")
    env_dirs = {"XDG_CONFIG_HOME": os.path.join(tmp, "config"), "XDG_DATA_HOME": os.path.join(tmp, "data")}
    os.environ.update(env_dirs)
    os.environ.setdefault("AIPROF_CALIBRATE", "0")
    p = None
    try:
        made = os.path.join(tmp, "made.json")
        many_ops_trace(made, a.events)
        native = os.path.join(tmp, "made.aiprof")
        r = subprocess.run([exe, "import", made, "-o", native], capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, "the hand-made trace imports: " + r.stderr.strip()[:200])
        logdir = os.path.join(tmp, "logdir")
        os.makedirs(logdir)
        with open(os.path.join(logdir, "other.json"), "wb") as f:
            f.write(tiny_trace("other", 20))
        big_native = open(native, "rb").read()
        big_json = open(made, "rb").read()
        outside = os.path.join(tmp, "outside.json")
        with open(outside, "wb") as f:
            f.write(tiny_trace("outside", 5))
        os.symlink(outside, os.path.join(logdir, "link_out.json"))
        os.symlink("other.json", os.path.join(logdir, "link_in.json"))
        os.mkfifo(os.path.join(logdir, "live.json"))
        device = os.geteuid() == 0
        if device:
            os.mknod(os.path.join(logdir, "null.json"), 0o600 | 0o020000, os.makedev(1, 3))  # /dev/null's
        p, port = start(exe, ["--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0",
                              "--max-convert-seconds", "0"])
        end = wait_state(p, port, "other.json", ("ready", "failed"))
        check(end is not None and end["state"] == "ready", "the small run is ready")
        fifo = wait_state(p, port, "live.json", ("failed",), timeout=10)
        check(fifo is not None and fifo["error"] == "live.json: not a regular file (a FIFO): skipped",
              "a FIFO named like a trace is a failed run saying what it is: %s" % (fifo and fifo["error"]))
        if device:
            dev = wait_state(p, port, "null.json", ("failed",), timeout=10)
            check(dev is not None and dev["error"] == "null.json: not a regular file (a character device): skipped",
                  "a device named like a trace is a failed run saying what it is: %s" % (dev and dev["error"]))
        names = [r["name"] for r in rows(port)]
        check("link_out.json" not in names and "link_in.json" not in names,
              "symbolic links are not followed, in or out of the logdir (docs/serve.md): %s" % names)

        tiny_native = os.path.join(tmp, "tiny.aiprof")
        r = subprocess.run([exe, "import", os.path.join(logdir, "other.json"), "-o", tiny_native],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, "a small trace imports: " + r.stderr.strip()[:200])
        writer_temporaries(p, port, logdir, open(tiny_native, "rb").read(), tiny_trace("temp", 20))
        removed_between_scans(p, port, logdir)

        # The first conversion of the .aiprof, whole: its time sets when to cut.
        big = os.path.join(logdir, "big.aiprof")
        with open(big, "wb") as f:
            f.write(big_native)
        rescan(port)
        t0 = time.time()
        wait_state(p, port, "big.aiprof", ("converting",))
        end = wait_state(p, port, "big.aiprof", ("ready", "failed"))
        took = time.time() - t0
        check(end is not None and end["state"] == "ready", "the whole .aiprof converts (%.2f s)" % took)
        # Cut at the start (its import reads the mapping), and later (the
        # native write and the report read it: the server ended there).
        for frac in (0.0, 0.2, 0.5):
            if p.poll() is not None:
                break
            changed_under_converter(p, port, big, big_native, frac * took, 4096,
                                    ".aiprof truncated %.0f%% into its conversion" % (frac * 100))
        if p.poll() is None:
            changed_under_converter(p, port, os.path.join(logdir, "big.json"), big_json, 0.2, len(big_json) // 3,
                                    "JSON truncated while it streams")
        if p.poll() is None:
            # Growing while read: half of it, then the rest while it converts.
            grow = os.path.join(logdir, "grow.json")
            with open(grow, "wb") as f:
                f.write(big_json[: len(big_json) // 2])
            rescan(port)
            wait_state(p, port, "grow.json", ("converting",))
            with open(grow, "ab") as f:
                f.write(big_json[len(big_json) // 2:])
            end = wait_state(p, port, "grow.json", ("ready", "failed"))
            check(p.poll() is None and end is not None, "a file growing while it is read: the server goes on")
            if end and end["state"] == "failed":
                check("grow.json" in end["error"], "failed on its half, naming it: " + end["error"][:300])
            rescan(port)
            time.sleep(0.2)
            end = wait_state(p, port, "grow.json", ("ready",))
            check(end is not None, "once whole, the grown file is converted again and ready")
        check(p.poll() is None, "the server ran through all of it")
    finally:
        if p is not None and p.poll() is None:
            check(stop(p) == 0, "server stopped cleanly")
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
