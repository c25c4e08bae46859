#!/usr/bin/env python3
"""The aiprof program does not link MPI; the MPI module is loaded only under
an MPI launcher, and a missing or foreign module is a clear error.

OpenMPI's libraries, linked into the program, cost every start of aiprof
about 13 ms and made it unable to start without them
(src/cluster/mpi/mpi_transport.h). Checks: the program's DT_NEEDED names no
MPI library; the module (when the build has one) does; `cluster analyze`
under an MPI launcher's environment with AIPROF_MPI_MODULE naming a missing
file, and then a file that is not a module, exits non-zero naming the path
and why, and writes no report. The real module under `mpirun -np 2` is
e2e_cluster_mpi's."""
import argparse
import os
import subprocess
import sys
import tempfile


def needed(path):
    out = subprocess.run(["readelf", "-d", "-W", path], capture_output=True, text=True, check=True).stdout
    return [line.split("[", 1)[1].rsplit("]", 1)[0] for line in out.splitlines() if "(NEEDED)" in line]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--module", help="the build's aiprof_mpi.so, when MPI was found")
    ap.add_argument("--trace", required=True, help="any small trace")
    a = ap.parse_args()
    failures = []
    mpi_libs = [lib for lib in needed(a.aiprof) if lib.startswith(("libmpi", "libopen-pal", "libopen-rte"))]
    if mpi_libs:
        failures.append(f"aiprof needs {mpi_libs}: MPI is linked into the program")
    if a.module:
        if not os.path.exists(a.module):
            failures.append(f"{a.module}: the build found MPI but made no module")
        elif not any(lib.startswith("libmpi") for lib in needed(a.module)):
            failures.append(f"{a.module} does not link libmpi: {needed(a.module)}")
    with tempfile.TemporaryDirectory(prefix="aiprof_mpi_module_") as tmp:
        junk = os.path.join(tmp, "junk.so")
        with open(junk, "w") as fh:
            fh.write("not a module\n")
        cases = [(os.path.join(tmp, "missing.so"), "No such file"), (junk, "junk.so")]
        for module, why in cases:
            out = os.path.join(tmp, "out")
            env = dict(os.environ, OMPI_COMM_WORLD_SIZE="1", AIPROF_MPI_MODULE=module)
            p = subprocess.run([a.aiprof, "cluster", "analyze", a.trace, "-o", out], env=env, capture_output=True,
                               text=True, timeout=120)
            if p.returncode == 0:
                failures.append(f"module {module}: exit 0 (expected an error)")
            if "MPI module" not in p.stderr or module not in p.stderr or why not in p.stderr:
                failures.append(f"module {module}: the error does not name the module, the path and why "
                                f"({why!r}): {p.stderr.strip()[:400]}")
            if os.path.exists(out) and os.listdir(out):
                failures.append(f"module {module}: wrote {os.listdir(out)}")
            print(f"AIPROF_MPI_MODULE={os.path.basename(module)}: exit {p.returncode}: {p.stderr.strip()[:300]}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
