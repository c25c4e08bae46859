#!/usr/bin/env python3
"""One browser test: runs the command after '--' (which writes the page),
then loads the page in headless Chromium with check_page.js and the view's
checks. Used by aiprof_browser_test() in BrowserTests.cmake."""
import argparse
import os
import re
import subprocess
import sys


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("usage: run_browser_test.py [options] -- COMMAND THAT WRITES THE PAGE")
    cut = argv.index("--")
    p = argparse.ArgumentParser()
    p.add_argument("--node", required=True)
    p.add_argument("--modules", required=True, help="node_modules folder holding playwright-core")
    p.add_argument("--chromium", required=True)
    p.add_argument("--checks", required=True)
    p.add_argument("--html", required=True)
    p.add_argument("--screenshot", required=True)
    p.add_argument("--expect-failure", metavar="REGEX",
                   help="the harness's self-test: pass only if the checks fail with output matching REGEX")
    p.add_argument("--no-csp", action="store_true", help="the harness's self-test pages carry no CSP")
    a = p.parse_args(argv[:cut])
    command = argv[cut + 1:]
    for what, path in (("node", a.node), ("chromium", a.chromium), ("playwright-core", os.path.join(a.modules, "playwright-core"))):
        if not os.path.exists(path):
            sys.exit(f"FAILED: {what} not found at {path} (scripts/install-deps.sh installs chromium and nodejs; "
                     "the browser_npm_install test installs playwright-core)")
    os.makedirs(os.path.dirname(os.path.abspath(a.html)), exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(a.screenshot)), exist_ok=True)
    if command:
        if os.path.exists(a.html):
            os.remove(a.html)
        r = subprocess.run(command)
        if r.returncode != 0:
            sys.exit(f"FAILED: {' '.join(command)} exited with {r.returncode}")
    env = dict(os.environ, NODE_PATH=a.modules)
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [a.node, os.path.join(here, "check_page.js"), "--html", a.html, "--checks", a.checks,
           "--screenshot", a.screenshot, "--chromium", a.chromium]
    if a.no_csp:
        cmd += ["--csp", "skip"]
    if not a.expect_failure:
        sys.exit(subprocess.run(cmd, env=env, timeout=300).returncode)
    r = subprocess.run(cmd, env=env, timeout=300, capture_output=True, text=True)
    print(r.stdout + r.stderr)
    if r.returncode == 0:
        sys.exit("FAILED: the checks passed, but this page must fail them")
    if not re.search(a.expect_failure, r.stdout + r.stderr):
        sys.exit(f"FAILED: the checks failed, but not with /{a.expect_failure}/")
    print(f"failed as expected (/{a.expect_failure}/)")


if __name__ == "__main__":
    main()
