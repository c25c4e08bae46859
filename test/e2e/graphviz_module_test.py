#!/usr/bin/env python3
"""The aiprof program does not link Graphviz; the topology view loads the
module aiprof_graphviz.so on first use, from the build tree and from an
install, and without it fails clearly while every other command works.

Graphviz's six libraries, linked in, cost every start of aiprof about 2 ms
(src/view/topology/topology_render.h). Checks:
  * neither the program nor the Python extension (when given) loads a
    Graphviz library (ldd: direct and indirect); the module does;
  * the build tree: `view --topology` writes a page whose SVG is Graphviz's
    own (`dot -Tsvg` over aiprof's DOT gives the same bytes, when dot is
    installed);
  * `cmake --install` into a temporary prefix: bin/aiprof finds
    lib/aiprof/aiprof_graphviz.so and renders the same SVG;
  * the module removed from that prefix: `view --topology` exits non-zero
    naming both paths tried and why and writes nothing; the DOT output,
    the flame view, analyze and --version still work;
  * `aiprof serve` from that prefix: the run's topology page is a 422
    saying what is missing, naming no path of the install (they are in
    the server's log); its flame page works;
  * AIPROF_GRAPHVIZ_MODULE naming a file that is not a module: an error
    naming it.
The loader's own cases (other version refused, found beside a shared
object) are src/base/module_loader_test.cc's."""
import argparse
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

FAILURES = []
GRAPHVIZ_LIBS = ("libgvc", "libcgraph", "libcdt", "libpathplan", "libltdl", "libxdot")


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def graphviz_libs(path):
    out = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    return sorted({line.split()[0] for line in out.splitlines() if line.strip().startswith(GRAPHVIZ_LIBS)})


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    return p.returncode, p.stdout, p.stderr


def check_serve_without_module(exe, trace, tmp, prefix):
    """aiprof serve without the module: the run's topology page is a 422
    whose text says what is missing and what to do, naming no path of the
    server's install; the paths tried go to the server's log."""
    logdir = os.path.join(tmp, "logdir")
    os.makedirs(logdir)
    shutil.copy(trace, logdir)
    p = subprocess.Popen([exe, "serve", "--logdir", logdir, "--listen", "127.0.0.1:0", "--scan-interval", "0"],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    log = []
    try:
        line = p.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not m:
            check(False, "serve without the module starts: " + line)
            return
        port = int(m.group(1))
        reader = threading.Thread(target=lambda: log.extend(p.stderr), daemon=True)
        reader.start()
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        def get(path):
            try:
                with opener.open("http://127.0.0.1:%d%s" % (port, path), timeout=60) as r:
                    return r.status, html.unescape(r.read().decode("utf-8"))
            except urllib.error.HTTPError as e:
                return e.code, html.unescape(e.read().decode("utf-8"))
        deadline = time.time() + 60
        rows = []
        while time.time() < deadline:
            s, body = get("/api/runs")
            rows = json.loads(body)["sections"]["runs"]["blocks"][0]["rows"] if s == 200 else []
            if rows and all(r["state"] in ("ready", "failed") for r in rows):
                break
            time.sleep(0.1)
        if not (len(rows) == 1 and rows[0]["state"] == "ready"):
            check(False, f"serve without the module: the run is ready: {rows}")
            return
        s, body = get("/runs/%d/topology" % rows[0]["id"])
        check(s == 422, f"serve without the module: the topology page is 422 ({s})")
        check("needs aiprof's Graphviz module" in body and "libgvc6" in body,
              f"serve without the module: the page says what is missing and what to do: {body[-600:]}")
        check(prefix not in body and "aiprof_graphviz.so:" not in body,
              f"serve without the module: the page names no path of the server's install: {body[-600:]}")
        s, _ = get("/runs/%d/flame" % rows[0]["id"])
        check(s == 200, f"serve without the module: the flame page still works ({s})")
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
    text = "".join(log)
    check(os.path.join(prefix, "bin", "aiprof_graphviz.so") in text,
          f"serve without the module: its log names the paths tried: {text[-600:]}")
    check("\n  " not in text.split("aiprof serve: view topology", 1)[-1].split("\n", 1)[0],
          "serve without the module: the log entry is one line")


def svg_of(exe, trace, out):
    rc, _, err = run([exe, "view", trace, "--topology", "--format", "svg", "-o", out])
    check(rc == 0, f"{exe} view --topology --format svg exits 0: {err.strip()[:400]}")
    if rc != 0 or not os.path.exists(out):
        return ""
    with open(out, encoding="utf-8") as fh:
        return fh.read()


def without_generator_line(svg):
    # `<!-- Generated by graphviz version ... -->`: the same in both, but
    # leave nothing to chance.
    return "\n".join(line for line in svg.splitlines() if not line.startswith("<!-- Generated by"))


def check_missing(exe, trace, tmp, expect_paths, why, env=None, label=""):
    page = os.path.join(tmp, "missing.html")
    rc, _, err = run([exe, "view", trace, "--topology", "-o", page], env=env)
    check(rc != 0, f"{label}: view --topology without the module exits non-zero")
    check("Graphviz module" in err, f"{label}: the error names the Graphviz module: {err.strip()[:400]}")
    for path in expect_paths:
        check(f"{path}: {why}" in err, f"{label}: the error names {path} and why ({why!r}): {err.strip()[:600]}")
    check(not os.path.exists(page), f"{label}: no page written")
    print(f"{label}: exit {rc}: {err.strip()[:500]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--module", required=True, help="the build's aiprof_graphviz.so")
    ap.add_argument("--build", required=True, help="the build folder (cmake --install)")
    ap.add_argument("--cmake", default="cmake", help="the CMake that configured it")
    ap.add_argument("--trace", required=True, help="a small GPU trace with launches")
    ap.add_argument("--python-ext", action="append", default=[], help="the Python extension(s)")
    a = ap.parse_args()

    for obj in [a.aiprof] + a.python_ext:
        libs = graphviz_libs(obj)
        check(not libs, f"{obj} loads Graphviz at start: {libs}")
    check(any(lib.startswith("libgvc") for lib in graphviz_libs(a.module)),
          f"{a.module} does not link libgvc: {graphviz_libs(a.module)}")
    check(os.path.dirname(os.path.realpath(a.module)) == os.path.dirname(os.path.realpath(a.aiprof)),
          "the module is built beside the program")

    with tempfile.TemporaryDirectory(prefix="aiprof_graphviz_module_") as tmp:
        # The build tree.
        svg = svg_of(a.aiprof, a.trace, os.path.join(tmp, "build.svg"))
        check("<svg" in svg and 'class="node"' in svg, "build tree: the SVG has nodes")
        dot_file = os.path.join(tmp, "topology.dot")
        rc, _, err = run([a.aiprof, "view", a.trace, "--topology", "--format", "dot", "-o", dot_file])
        check(rc == 0, f"view --topology --format dot: {err.strip()[:300]}")
        if shutil.which("dot") and rc == 0:
            by_dot = subprocess.run(["dot", "-Tsvg", dot_file], capture_output=True, text=True, check=True).stdout
            check(without_generator_line(by_dot) == without_generator_line(svg),
                  "build tree: the SVG differs from `dot -Tsvg` over the same DOT")

        # An install.
        prefix = os.path.join(tmp, "prefix")
        rc, out, err = run([a.cmake, "--install", a.build, "--prefix", prefix])
        check(rc == 0, f"cmake --install: {err.strip()[:400]}")
        installed = os.path.join(prefix, "bin", "aiprof")
        modules = [os.path.join(d, f) for d, _, fs in os.walk(prefix) for f in fs if f == "aiprof_graphviz.so"]
        check(len(modules) == 1 and os.sep.join(["lib", "aiprof", "aiprof_graphviz.so"]) in modules[0],
              f"the install has one aiprof_graphviz.so, in lib/aiprof/: {modules}")
        if rc == 0 and os.path.exists(installed):
            isvg = svg_of(installed, a.trace, os.path.join(tmp, "installed.svg"))
            check(isvg == svg, "install: the SVG differs from the build tree's")
            # Without the module.
            for m in modules:
                os.remove(m)
            bin_dir = os.path.join(prefix, "bin")
            check_missing(installed, a.trace, tmp,
                          [os.path.join(bin_dir, "aiprof_graphviz.so"),
                           os.path.join(bin_dir, "..", "lib", "aiprof", "aiprof_graphviz.so")],
                          "No such file or directory", label="module removed")
            other = [
                ["--version"],
                ["analyze", a.trace],
                ["view", a.trace, "--topology", "--format", "dot", "-o", os.path.join(tmp, "still.dot")],
                ["view", a.trace, "--flame", "-o", os.path.join(tmp, "flame.html")],
            ]
            for args in other:
                rc, _, err = run([installed] + args)
                check(rc == 0, f"module removed: aiprof {' '.join(args[:2])} exits {rc}: {err.strip()[:300]}")
            check_serve_without_module(installed, a.trace, tmp, prefix)

        # A file that is not a module, named by the override.
        junk = os.path.join(tmp, "junk.so")
        with open(junk, "w") as fh:
            fh.write("not a module\n")
        env = dict(os.environ, AIPROF_GRAPHVIZ_MODULE=junk)
        check_missing(a.aiprof, a.trace, tmp, [junk], "", env=env, label="AIPROF_GRAPHVIZ_MODULE=junk.so")

    for f in FAILURES:
        print("FAIL:", f)
    print(f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
