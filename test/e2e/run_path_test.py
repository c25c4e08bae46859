#!/usr/bin/env python3
"""Run paths: no program or module of the build loads libraries from the
current directory.

An empty or relative element of an ELF file's RUNPATH/RPATH is searched
relative to the process's working directory: CMake's build RUNPATH for the
aiprof program once ended in an empty element ("/usr/...openmpi/lib:"), and
aiprof started in a folder holding a file named libdw.so.1 loaded it (here
a junk file: "libdw.so.1: file too short", exit 127). Checks every ELF
program and shared module under the build folder, then starts the program
in a folder of junk libraries named after each library it needs."""
import argparse
import os
import subprocess
import sys
import tempfile


def elf_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("CMakeFiles", "node_modules", "_deps")]
        for f in filenames:
            path = os.path.join(dirpath, f)
            if os.path.islink(path) or not os.path.isfile(path) or f.endswith((".o", ".a")):
                continue
            with open(path, "rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    yield path


def dynamic(path):
    out = subprocess.run(["readelf", "-d", "-W", path], capture_output=True, text=True, check=True).stdout
    paths, needed = [], []
    for line in out.splitlines():
        if "(RUNPATH)" in line or "(RPATH)" in line:
            paths.append(line.split("[", 1)[1].rsplit("]", 1)[0])
        elif "(NEEDED)" in line:
            needed.append(line.split("[", 1)[1].rsplit("]", 1)[0])
    return paths, needed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--aiprof", required=True)
    a = ap.parse_args()
    failures, checked = [], 0
    for path in elf_files(a.build):
        runpaths, _ = dynamic(path)
        for rp in runpaths:
            for element in rp.split(":"):
                checked += 1
                if not (element.startswith("/") or element.startswith("$ORIGIN")):
                    failures.append(f"{path}: run path [{rp}] has the element '{element}', "
                                    "searched from the working directory")
    if checked == 0 and not failures:
        print("no run path in the build: nothing to check there")
    # The program itself, started among junk files named after its libraries.
    _, needed = dynamic(a.aiprof)
    with tempfile.TemporaryDirectory(prefix="aiprof_runpath_") as tmp:
        for lib in needed:
            with open(os.path.join(tmp, lib), "w") as fh:
                fh.write("not a library\n")
        p = subprocess.run([os.path.abspath(a.aiprof), "--version"], cwd=tmp, capture_output=True, text=True,
                           timeout=60)
        if p.returncode != 0 or not p.stdout.startswith("aiprof"):
            failures.append(f"aiprof --version among junk {len(needed)} libraries exited {p.returncode}: "
                            f"{p.stderr.strip()[:300]}")
    for f in failures:
        print("FAIL:", f)
    print(f"{checked} run path elements checked; program started among {len(needed)} junk libraries")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
