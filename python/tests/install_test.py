"""pip-installs the package into a fresh virtualenv, offline, and uses it from there.

    python3 -m venv --system-site-packages VENV
    VENV/bin/pip install --no-build-isolation python/

With AIPROF_BUILD_DIR set (ctest sets it to this build) setup.py reuses that
CMake build; without it, setup.py configures and builds the project itself
(AIPROF_INSTALL_TEST_FULL_BUILD=1 runs that slower path).
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SOURCE = os.environ["AIPROF_SOURCE_DIR"]
SAMPLE = os.path.join(os.environ["AIPROF_TEST_DATA"], "alexnet_a100_kineto.json.gz")

USE = textwrap.dedent("""
    import os, sys
    import aiprof
    here = os.path.dirname(aiprof.__file__)
    assert here.startswith(sys.prefix), (here, sys.prefix)  # the venv's copy, not the build's
    ops = aiprof.load(sys.argv[1]).ops()
    assert len(ops) > 10
    with aiprof.span("installed"):
        pass
    aiprof.flush()
    print(aiprof.output_path())
""")


class PipInstall(unittest.TestCase):
    def test_venv_install_offline(self):
        with tempfile.TemporaryDirectory() as d:
            venv = os.path.join(d, "venv")
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            if os.environ.get("AIPROF_INSTALL_TEST_FULL_BUILD") == "1":
                env.pop("AIPROF_BUILD_DIR", None)
            # No index: the install must not need the network (PyPI is unreachable here).
            subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--no-build-isolation", "--no-index",
                            "--no-cache-dir", os.path.join(SOURCE, "python")],
                           check=True, env=env, cwd=d, stdout=subprocess.DEVNULL)
            out = os.path.join(d, "run")
            os.mkdir(out)
            env["AIPROF_OUTPUT"] = os.path.join(out, "installed.aiprof")
            proc = subprocess.run([os.path.join(venv, "bin", "python"), "-c", USE, SAMPLE], check=True, env=env,
                                  cwd=out, capture_output=True, text=True)
            self.assertEqual(proc.stdout.strip(), env["AIPROF_OUTPUT"])
            self.assertEqual(os.listdir(out), ["installed.aiprof"])


if __name__ == "__main__":
    unittest.main()
