# SPDX-License-Identifier: Apache-2.0
"""Builds the extension module tprod._tprod with CMake from this repository, for pip and setuptools.

`pip install --no-build-isolation ./python` (from the repository root) configures a Release build of the
repository's CMake project with only the Python package on (no tests, examples or CUDA), builds the target
tprod_python, and installs the package with the module. The Python that runs pip is the one the module is built
for. Settings (environment):

* TPROD_CMAKE_BUILD_DIR: an existing build tree configured with TPROD_BUILD_PYTHON=ON for this Python; the module
  is built there (usually already is) instead of in a fresh build of its own;
* TPROD_CMAKE_ARGS: more -D options for the fresh build (e.g. "-DTPROD_USE_OPENMP=OFF");
* TPROD_JOBS: parallel compile jobs (default: the CPU count).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def version() -> str:
    """MAJOR.MINOR.PATCH from include/tprod/version.hpp, the one place that states it."""
    text = (ROOT / "include" / "tprod" / "version.hpp").read_text()
    parts = [re.search(rf"#define TPROD_VERSION_{part} (\d+)", text) for part in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        sys.exit(f"tprod setup.py: no TPROD_VERSION_MAJOR/MINOR/PATCH in {ROOT / 'include/tprod/version.hpp'}")
    return ".".join(p.group(1) for p in parts)


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        if shutil.which("cmake") is None:
            sys.exit("tprod setup.py: cmake is not on the PATH (Debian: apt-get install cmake, or run "
                     "scripts/install-deps.sh)")
        reused = os.environ.get("TPROD_CMAKE_BUILD_DIR")
        build_dir = Path(reused).resolve() if reused else Path(self.build_temp).resolve() / "cmake"
        if reused:
            if not (build_dir / "CMakeCache.txt").exists():
                sys.exit(f"tprod setup.py: TPROD_CMAKE_BUILD_DIR={reused} is not a configured CMake build tree")
        else:
            configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                         "-DTPROD_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}",
                         "-DTPROD_BUILD_TESTS=OFF", "-DTPROD_BUILD_BENCHMARKS=OFF", "-DTPROD_BUILD_EXAMPLES=OFF",
                         "-DTPROD_BUILD_TOOLS=OFF", "-DTPROD_ENABLE_CUDA=OFF", "-DTPROD_ENABLE_MPI=OFF",
                         "-DTPROD_INSTALL=OFF"]
            subprocess.run(configure + shlex.split(os.environ.get("TPROD_CMAKE_ARGS", "")), check=True)
        jobs = os.environ.get("TPROD_JOBS", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "tprod_python", "-j", jobs], check=True)
        built = sorted((build_dir / "python" / "tprod").glob("_tprod*.so"))
        if not built:
            sys.exit(f"tprod setup.py: the build left no _tprod*.so in {build_dir / 'python' / 'tprod'}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], target)


setup(version=version(), ext_modules=[Extension("tprod._tprod", sources=[])], cmdclass={"build_ext": CMakeBuild})
