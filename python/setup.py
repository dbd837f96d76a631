"""Build hook: compiles librotq with CMake and bundles it as rotq/_lib/librotq.so.

The package lives at <repo>/python; the C sources are at <repo>. Environment:
  ROTQ_LIBRARY=/path/to/librotq.so  bundle this existing build instead of compiling
  ROTQ_CUDA=OFF|ON|AUTO             passed to CMake (default AUTO: CUDA if nvcc is found)
  ROTQ_SOURCE_DIR=/path/to/repo     where the C sources are (default: the parent dir)
  ROTQ_BUILD_TYPE=Release           CMAKE_BUILD_TYPE
  ROTQ_CMAKE_ARGS="..."             extra CMake configure arguments
  CMAKE_BUILD_PARALLEL_LEVEL=N      build jobs (default: number of CPUs)
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
LIB_NAME = "librotq.so" if sys.platform.startswith("linux") else (
    "librotq.dylib" if sys.platform == "darwin" else "rotq.dll")


def _log(msg):
    print(f"rotq build: {msg}", flush=True)


def _source_dir():
    src = os.environ.get("ROTQ_SOURCE_DIR") or os.path.dirname(HERE)
    src = os.path.abspath(src)
    if not (os.path.isfile(os.path.join(src, "CMakeLists.txt"))
            and os.path.isfile(os.path.join(src, "include", "rotq.h"))):
        raise RuntimeError(
            f"rotq: the C sources were not found at {src} (expected CMakeLists.txt and "
            "include/rotq.h). Build from a checkout of the repository (pip install ./python), "
            "or set ROTQ_SOURCE_DIR to it, or ROTQ_LIBRARY to an existing librotq.so.")
    return src


def _cmake():
    exe = shutil.which("cmake")
    if exe is None:
        raise RuntimeError("rotq: cmake (>= 3.24) is required to build librotq and was not "
                           "found on PATH (or set ROTQ_LIBRARY to an existing build)")
    return exe


def _cached_source(build_dir):
    cache = os.path.join(build_dir, "CMakeCache.txt")
    if not os.path.isfile(cache):
        return None
    with open(cache, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"CMAKE_HOME_DIRECTORY:INTERNAL=(.*)", line.strip())
            if m:
                return m.group(1)
    return None


def build_librotq(build_dir):
    """Configure and build the `rotq` target; returns the path of the built library."""
    src = _source_dir()
    cmake = _cmake()
    cached = _cached_source(build_dir)
    if cached is not None and os.path.realpath(cached) != os.path.realpath(src):
        _log(f"removing stale build dir {build_dir} (was configured for {cached})")
        shutil.rmtree(build_dir)
    os.makedirs(build_dir, exist_ok=True)
    cuda = os.environ.get("ROTQ_CUDA", "AUTO").upper()
    if cuda not in ("ON", "OFF", "AUTO"):
        raise RuntimeError(f"rotq: ROTQ_CUDA must be ON, OFF or AUTO, not {cuda!r}")
    cfg = [
        cmake, "-S", src, "-B", build_dir,
        "-DROTQ_BUILD_TESTS=OFF", "-DROTQ_BUILD_TOOLS=OFF",
        f"-DROTQ_CUDA={cuda}",
        f"-DCMAKE_BUILD_TYPE={os.environ.get('ROTQ_BUILD_TYPE', 'Release')}",
    ] + shlex.split(os.environ.get("ROTQ_CMAKE_ARGS", ""))
    _log(" ".join(shlex.quote(c) for c in cfg))
    subprocess.check_call(cfg)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    bld = [cmake, "--build", build_dir, "--target", "rotq", "--parallel", jobs]
    _log(" ".join(bld))
    subprocess.check_call(bld)
    # The `rotq` SHARED target lands in the top-level binary dir (librotq.so ->
    # librotq.so.0.2 -> librotq.so.0.2.0); take the real file.
    for cand in (os.path.join(build_dir, LIB_NAME),
                 os.path.join(build_dir, "Release", LIB_NAME)):
        if os.path.exists(cand):
            return os.path.realpath(cand)
    for root, _, files in os.walk(build_dir):
        if LIB_NAME in files:
            return os.path.realpath(os.path.join(root, LIB_NAME))
    raise RuntimeError(f"rotq: the build finished but {LIB_NAME} was not found under {build_dir}")


class BuildPyWithLib(build_py):
    """build_py that also puts librotq into rotq/_lib/."""

    def finalize_options(self):
        super().finalize_options()
        # pip builds in the source tree and reuses python/build/lib; copy the
        # sources every time rather than trusting modification times.
        self.force = True

    def run(self):
        super().run()
        lib = os.environ.get("ROTQ_LIBRARY")
        if lib:
            if not os.path.isfile(lib):
                raise RuntimeError(f"rotq: ROTQ_LIBRARY={lib!r} does not exist")
            lib = os.path.realpath(lib)
            _log(f"bundling ROTQ_LIBRARY={lib} (no CMake build)")
        else:
            build_temp = self.get_finalized_command("build").build_temp
            lib = build_librotq(os.path.abspath(os.path.join(build_temp, "cmake")))
        # Editable installs (pip install -e) import from the source tree.
        if getattr(self, "editable_mode", False):
            dest_dir = os.path.join(HERE, "rotq", "_lib")
        else:
            dest_dir = os.path.join(self.build_lib, "rotq", "_lib")
        os.makedirs(dest_dir, exist_ok=True)
        dest = os.path.join(dest_dir, LIB_NAME)
        _log(f"copying {lib} -> {dest}")
        shutil.copyfile(lib, dest)
        os.chmod(dest, 0o755)


class BinaryDistribution(Distribution):
    """The wheel carries a native library, so it is platform-specific."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPyWithLib}, distclass=BinaryDistribution)
