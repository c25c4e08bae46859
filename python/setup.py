"""Builds the _aiprof extension with the project's CMake build (pyproject.toml).

AIPROF_BUILD_DIR=<an existing CMake build folder of this repository> reuses
that build (only the _aiprof target is brought up to date); otherwise the
project is configured in setuptools' temporary folder with tests and
benchmarks off, and built with CMAKE_BUILD_PARALLEL_LEVEL jobs (default 2).
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("AIPROF_BUILD_DIR")
        if not build_dir:
            build_dir = os.path.join(os.path.abspath(self.build_temp), "cmake")
            os.makedirs(build_dir, exist_ok=True)
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.check_call(["cmake", "-S", REPO, "-B", build_dir, *generator,
                                   "-DCMAKE_BUILD_TYPE=Release", "-DAIPROF_BUILD_TESTS=OFF",
                                   "-DAIPROF_BUILD_BENCHMARKS=OFF", "-DAIPROF_BUILD_PYTHON=ON",
                                   "-DPython3_EXECUTABLE=" + sys.executable])
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "aiprof_python", "-j", jobs])
        package = os.path.join(build_dir, "python", "aiprof")
        built = glob.glob(os.path.join(package, "_aiprof*.so"))
        if len(built) != 1:
            raise RuntimeError("expected one _aiprof extension in %s, found %r" % (package, built))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)
        # The SDK extension and the runtime it loads through its $ORIGIN runpath.
        for lib in glob.glob(os.path.join(package, "_sdk*.so")) + glob.glob(os.path.join(package, "libaiprof_sdk.so*")):
            shutil.copyfile(lib, os.path.join(os.path.dirname(target), os.path.basename(lib)))


setup(ext_modules=[CMakeExtension("aiprof._aiprof")], cmdclass={"build_ext": CMakeBuild})
