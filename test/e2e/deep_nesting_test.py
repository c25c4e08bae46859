#!/usr/bin/env python3
"""100,000-deep nesting through every command (issue #27, item 1).

The trace is hand-made here: one thread whose 100,000 complete (X) events
each start 1 us after and end 1 us before the one enclosing it, so slice k
sits at depth k. The model's depth column is 16 bits: depth past 65,535 is
held there and counted as the diagnostic "slice_depth_limit" (before the fix
the timeline's density builder overflowed its buffers: SIGSEGV, or an
AddressSanitizer heap-buffer-overflow, in `aiprof report`).

Every command runs on the JSON and on its .aiprof import: summary, analyze,
diagnose, report (HTML), each view in each format, both exports. Each must
exit 0 without a signal, and its peak memory stay under 2 GiB (the folded
flame graph took 2 GB before its depth cap). The folded output must be
linear: frames past depth 256 summed into one line.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

DEPTH = 100_000
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def write_trace(path):
    with open(path, "w") as f:
        f.write('{"traceEvents":[\n')
        f.write('{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"recursive"}}')
        for k in range(DEPTH):
            f.write(',\n{"ph":"X","cat":"python_function","name":"f%d","pid":1,"tid":1,"ts":%d,"dur":%d}'
                    % (k % 7, k, 2 * (DEPTH - k) + 10))
        f.write("\n]}\n")


def run_checked(name, cmd):
    """Runs cmd with its output in files; checks exit, sanitizer reports and peak memory (wait4)."""
    pid = os.fork()
    if pid == 0:
        errfile = os.open(cmd_err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        outfile = os.open(cmd_out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(outfile, 1)
        os.dup2(errfile, 2)
        try:
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    err = open(cmd_err_path, encoding="utf-8", errors="replace").read()
    out = open(cmd_out_path, "rb").read()
    signaled = os.WIFSIGNALED(status)
    rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
    rss_mib = usage.ru_maxrss / 1024
    print(f"{name}: rc {rc}, peak {rss_mib:.0f} MiB")
    check(not signaled and rc == 0, f"{name}: rc {rc}: {err[-2000:]}")
    check("Sanitizer" not in err and "runtime error" not in err, f"{name}: sanitizer report: {err[-2000:]}")
    check(rss_mib < 2048, f"{name}: peak memory {rss_mib:.0f} MiB")
    return out, err


cmd_out_path = cmd_err_path = None


def main():
    global cmd_out_path, cmd_err_path
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cmd_out_path, cmd_err_path = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        src = os.path.join(tmp, "deep.json")
        write_trace(src)
        native = os.path.join(tmp, "deep.aiprof")
        run_checked("import", [a.aiprof, "import", src, "-o", native])
        for label, inp in (("json", src), ("aiprof", native)):
            out, _ = run_checked(f"{label} summary", [a.aiprof, "summary", inp, "--format", "json"])
            try:
                summary = json.loads(out)
            except ValueError:
                summary = {}
                check(False, f"{label} summary: not JSON")
            text = json.dumps(summary)
            if label == "json":  # the native file keeps the diagnostics it was imported with too
                check("slice_depth_limit" in text, f"{label} summary: no slice_depth_limit diagnostic")
            check(str(DEPTH) in text, f"{label} summary: {DEPTH} slices not counted")
            run_checked(f"{label} analyze", [a.aiprof, "analyze", inp, "--format", "json"])
            run_checked(f"{label} diagnose", [a.aiprof, "diagnose", inp])
            run_checked(f"{label} report", [a.aiprof, "report", inp, "-o", os.path.join(tmp, f"{label}.html")])
            for view, formats in (("flame", ("html", "svg", "folded", "speedscope")),
                                  ("timeline", ("html",)), ("topology", ("html", "svg", "dot"))):
                for fmt in formats:
                    dest = os.path.join(tmp, f"{label}_{view}.{fmt}")
                    run_checked(f"{label} view --{view} --format {fmt}",
                                [a.aiprof, "view", inp, "--" + view, "--format", fmt, "-o", dest])
                    check(os.path.getsize(dest) > 0, f"{label} {view} {fmt}: empty")
            folded = open(os.path.join(tmp, f"{label}_flame.folded"), encoding="utf-8").read()
            check(len(folded) < 100 * DEPTH, f"{label} folded: {len(folded)} bytes is not linear in the input")
            check("[frames deeper than 256 folded here]" in folded, f"{label} folded: no depth-cap line")
            for fmt, ext in (("perfetto", "pftrace"), ("chrome-json", "json")):
                dest = os.path.join(tmp, f"{label}_export.{ext}")
                run_checked(f"{label} export {fmt}", [a.aiprof, "export", inp, "--format", fmt, "-o", dest])
    print(f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
