#!/usr/bin/env python3
"""Every `aiprof ...` example in a code block of README.md runs, as pasted
from the repository root, and exits 0.

The examples are those test/docs/readme_flags_test.py reads (its
`examples()`: shell lines of code blocks that run aiprof, continuation lines
joined, the output lines of `$ ` blocks left out); inline code in prose is
not run. Each code block runs in a fresh temporary folder, its examples in
order (a block is a sequence: `cluster map` then `cluster reduce` of its
digests, `set-baseline` then `validate --baseline`): the folder holds a
symbolic link to each top-level entry the repository tracks, and `../shared`
beside it links to the repository's `../shared`, so an example's relative
inputs (`test/data/...`, `../shared/fixtures/...`) resolve as from the
repository root while its outputs (`-o x.html`, `--db k.db`, `> f.svg`) land
in the temporary folder. Each line runs unchanged through `bash -o pipefail
-c`, with `aiprof` on PATH being the binary under test, HOME and the XDG
folders in the temporary folder, AIPROF_CALIBRATE=0, standard input empty
and a time limit. A non-zero exit fails the test, naming the README line,
the command and the end of its standard error.

Examples that cannot run here are listed in SKIP below, each keyed by a
substring only that example has, with the reason; a key that matches no
example fails the test, so the list stays true."""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from readme_flags_test import examples  # noqa: E402  (the one extractor)

# substring of the example -> why it is not run here.
SKIP = {
    # Capture a program the user brings (and perf, ptrace, seconds of run).
    "-- python3 your_train.py --epochs 1": "records a program of the user's",
    "--pid 4242": "attaches to a running process of the user's",
    "-- ./your_server": "records a service of the user's",
    "--torch-every 10": "records a program of the user's",
    # The three lines after the captures read the capture they wrote.
    "view --flame run.aiprof": "reads the capture of `aiprof trace` above",
    "analyze run.aiprof --only page_faults": "reads the capture of `aiprof trace` above",
    "whatif run.aiprof": "reads the capture of `aiprof trace` above",
    "summary run.aiprof": "reads a capture of `aiprof trace`",
    # Services and servers: they run until stopped.
    "monitor --pid $!": "watches the user's service started on the line before",
    'monitor --alert "p99_latency > 500ms"': "watches a service of the user's",
    "aiprof mcp --allow": "an MCP server on standard input, for a client",
    "serve --logdir /shared/profiles": "a server: runs until stopped",
    "serve --logdir profiles --listen": "a server: runs until stopped",
    "push test/data/resnet50_num_workers_4": "needs the server of the line before running",
    # Not shipped in this layout.
    "roofline your_vllm_decode/": "needs a folder of the user's laid out as TraceLens's (replay trace "
                                  "beside capture_traces/); ../shared/fixtures/tracelens holds it flattened",
    # Other programs.
    "flamegraph.pl": "needs Brendan Gregg's flamegraph.pl",
    "mpirun -np 16": "a job folder of the user's, under an MPI launcher with 16 slots",
}
# Skipped only where the program it needs is missing.
NEEDS = {
    "-o report.pdf": "chromium",
}


def link_tree(root, work):
    """work/: a link to each tracked top-level entry of root; ../shared."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True).stdout
        names = {p.split(b"/")[0].decode() for p in out.split(b"\0") if p}
    except (OSError, subprocess.CalledProcessError):
        names = {n for n in os.listdir(root) if not n.startswith(("build", "out", "."))}
    os.makedirs(work)
    for n in names:
        os.symlink(os.path.join(root, n), os.path.join(work, n))
    shared = os.path.join(os.path.dirname(os.path.abspath(root)), "shared")
    if os.path.isdir(shared):
        os.symlink(shared, os.path.join(os.path.dirname(work), "shared"))


def run_block(a, block, tmp):
    """Runs a code block's examples in order; returns (failures, ran, skipped)."""
    base = os.path.join(tmp, f"block{block[0].block}")
    work = os.path.join(base, "main")
    link_tree(a.root, work)
    bindir = os.path.join(base, "bin")
    os.makedirs(bindir)
    os.symlink(os.path.abspath(a.aiprof), os.path.join(bindir, "aiprof"))
    env = dict(os.environ)
    env.update(PATH=bindir + os.pathsep + env.get("PATH", ""), HOME=os.path.join(base, "home"),
               XDG_CONFIG_HOME=os.path.join(base, "config"), XDG_DATA_HOME=os.path.join(base, "data"),
               XDG_CACHE_HOME=os.path.join(base, "cache"), AIPROF_CALIBRATE="0")
    for d in ("home", "config", "data", "cache"):
        os.makedirs(os.path.join(base, d))
    failures, ran, skipped = [], 0, 0
    for e in block:
        why = next((r for k, r in SKIP.items() if k in e.text), None)
        if why is None:
            why = next((f"needs {p}, not installed" for k, p in NEEDS.items()
                        if k in e.text and shutil.which(p) is None), None)
        if why is None and "../shared/" in e.text and not os.path.isdir(os.path.join(base, "shared")):
            why = "needs the fixtures in ../shared, not beside this source tree"
        if why is not None:
            skipped += 1
            print(f"skip README.md:{e.line}: {why}: {e.text[:100]}")
            continue
        t0 = time.monotonic()
        run_env = env
        if e.text.strip() == "aiprof calibrate":
            # Beside the other tests (ctest -j) `aiprof calibrate` measures
            # a busy machine, prints the peaks and declines to save them
            # (exit 1); the example's point is the measurement and the save,
            # which AIPROF_CALIBRATE=save keeps whatever the load.
            run_env = dict(env, AIPROF_CALIBRATE="save")
        p = subprocess.Popen(["bash", "-o", "pipefail", "-c", e.text], cwd=work, env=run_env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        try:
            out, err = p.communicate(timeout=a.timeout)
            status = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            status = f"no exit within {a.timeout} s"
        ran += 1
        dt = time.monotonic() - t0
        print(f"{'ok' if status == 0 else 'FAIL'} README.md:{e.line} ({dt:.2f} s): {e.text[:100]}")
        if status != 0:
            tail = err.decode(errors="replace").strip().splitlines()[-5:] or \
                out.decode(errors="replace").strip().splitlines()[-5:]
            failures.append(f"README.md:{e.line}: exit {status}: {e.text}\n    " + "\n    ".join(tail))
    return failures, ran, skipped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--root", required=True, help="the source tree")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per example")
    ap.add_argument("--only", help="run only the examples holding this text")
    a = ap.parse_args()
    a.root = os.path.abspath(a.root)
    found = [e for e in examples(os.path.join(a.root, "README.md")) if e.block is not None]
    stale = [k for k in list(SKIP) + list(NEEDS) if not any(k in e.text for e in found)]
    if a.only:
        found = [e for e in found if a.only in e.text]
    blocks = {}
    for e in found:
        blocks.setdefault(e.block, []).append(e)
    failures, ran, skipped = [], 0, 0
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="aiprof-readme-") as tmp:
        for block in blocks.values():
            f, r, s = run_block(a, block, tmp)
            failures += f
            ran += r
            skipped += s
    for k in stale:
        failures.append(f"SKIP/NEEDS key {k!r} matches no example of README.md: remove it")
    for f in failures:
        print("FAIL:", f)
    print(f"{ran} examples run, {skipped} skipped, in {time.monotonic() - t0:.1f} s; {len(failures)} failures")
    return 1 if failures or (ran < 40 and not a.only) else 0


if __name__ == "__main__":
    sys.exit(main())
