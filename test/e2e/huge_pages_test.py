#!/usr/bin/env python3
"""aiprof re-executes itself with glibc.malloc.hugetlb=1 for large inputs
(src/base/huge_pages.h), and the commands it starts never inherit that.

`aiprof trace -- sh -c ...` with a 70 MiB (sparse) file among the arguments:
the shell reads its parent's start-up environment from /proc/PPID/environ
(what aiprof was exec'd with: the tunable must be there) and its own
GLIBC_TUNABLES (must be as the user set it). Then the same with a small file,
with the user's own tunables, and with AIPROF_HUGEPAGES=0."""
import argparse
import os
import subprocess
import sys
import tempfile

SKIP = 77


def run(aiprof, tmp, big, env_extra):
    parent_out = os.path.join(tmp, "parent.env")
    child_out = os.path.join(tmp, "child.env")
    for p in (parent_out, child_out):
        if os.path.exists(p):
            os.unlink(p)
    script = (
        'cat /proc/$PPID/environ > "$1"; '
        'printf "%s" "${GLIBC_TUNABLES-unset}" > "$2"'
    )
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)
    env.pop("AIPROF_HUGEPAGES", None)
    env.update(env_extra)
    r = subprocess.run([aiprof, "trace", "-o", os.path.join(tmp, "out.aiprof"), "--",
                        "sh", "-c", script, big, parent_out, child_out],
                       env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit(f"FAIL: aiprof trace exited {r.returncode}: {r.stderr}")
    # aiprof's start-up environment, as it was exec'd. glibc's tunable parser
    # cuts GLIBC_TUNABLES at each ':' in place (NULs in this block), so the
    # value is the entry plus the NUL-separated pieces that follow it up to
    # the next NAME=VALUE entry.
    with open(parent_out, "rb") as f:
        entries = f.read().decode(errors="replace").split("\0")
    parent = ""
    for i, e in enumerate(entries):
        if e.startswith("GLIBC_TUNABLES="):
            pieces = [e]
            for more in entries[i + 1:]:
                if not more.startswith("glibc."):
                    break
                pieces.append(more)
            parent = ":".join(pieces)
    with open(child_out) as f:
        child = f.read()
    return parent, child


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    a = ap.parse_args()
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            thp = f.read()
    except OSError:
        thp = ""
    if not thp or "[never]" in thp:
        print("SKIP: this kernel has transparent huge pages off (or no sysfs knob): nothing to restart for")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "big.bin")
        with open(big, "wb") as f:
            f.truncate(70 << 20)
        small = os.path.join(tmp, "small.bin")
        with open(small, "wb") as f:
            f.truncate(1 << 20)
        failures = []

        def expect(what, got, want):
            print(f"{what}: {got!r}")
            if got != want:
                failures.append(f"{what}: got {got!r}, want {want!r}")

        parent, child = run(a.aiprof, tmp, big, {})
        expect("large input: aiprof's start-up environment", parent, "GLIBC_TUNABLES=glibc.malloc.hugetlb=1")
        expect("large input: the command's GLIBC_TUNABLES", child, "unset")

        parent, child = run(a.aiprof, tmp, big, {"GLIBC_TUNABLES": "glibc.malloc.arena_max=4"})
        expect("user tunables: aiprof's", parent, "GLIBC_TUNABLES=glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1")
        expect("user tunables: the command's", child, "glibc.malloc.arena_max=4")

        parent, child = run(a.aiprof, tmp, small, {})
        expect("small input: aiprof's", parent, "")
        expect("small input: the command's", child, "unset")

        parent, child = run(a.aiprof, tmp, big, {"AIPROF_HUGEPAGES": "0"})
        expect("AIPROF_HUGEPAGES=0: aiprof's", parent, "")
        expect("AIPROF_HUGEPAGES=0: the command's", child, "unset")
        if failures:
            print("FAIL:\n  " + "\n  ".join(failures))
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
