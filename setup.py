"""pip's build of the cofem package (pyproject.toml): the Python package python/cofem plus, inside
it as cofem/_native, what `cmake --install --component cofem_runtime` installs (libcofem.so, the
cofem program, the demo scenes and meshes), built by CMake from this checkout.

    pip install --no-build-isolation .
    COFEM_CMAKE_ARGS="-DCOFEM_CUDA=OFF" pip install --no-build-isolation .   # extra CMake options
    COFEM_BUILD_JOBS=2 ...                                                   # parallel build jobs

The wheel is specific to this machine's libraries (CHOLMOD, OpenBLAS, cJSON from Debian): it is
built where it is installed, not distributed."""
import os
import re
import shlex
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def version():
    """the headers' version (include/cofem/cofem.h), as CMakeLists.txt reads it"""
    text = open(os.path.join(HERE, "include", "cofem", "cofem.h")).read()
    parts = [re.search(rf"#define COFEM_VERSION_{k} (\d+)", text).group(1) for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


class CMakeBuild(build_ext):
    """libcofem and the cofem program by CMake (no tests, no viewer), installed into the package"""

    def run(self):
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        native = os.path.abspath(os.path.join(self.build_lib, "cofem", "_native"))
        if shutil.which("cmake") is None:
            raise RuntimeError("cofem: cmake not found (Debian: apt-get install cmake; see tools/setup.sh)")
        args = ["-DCMAKE_BUILD_TYPE=Release", "-DCOFEM_TESTS=OFF", "-DCOFEM_VIEWER=OFF", "-DCOFEM_PYTHON=OFF",
                "-DCMAKE_INSTALL_LIBDIR=lib", "-DCMAKE_INSTALL_PREFIX=" + native]
        args += shlex.split(os.environ.get("COFEM_CMAKE_ARGS", ""))
        jobs = os.environ.get("COFEM_BUILD_JOBS") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "-S", HERE, "-B", build, *args], check=True)
        subprocess.run(["cmake", "--build", build, "-j", jobs, "--target", "cofem_shared", "cofem_cli"], check=True)
        if os.path.isdir(native):
            shutil.rmtree(native)
        subprocess.run(["cmake", "--install", build, "--component", "cofem_runtime", "--prefix", native], check=True)
        # a wheel holds no symbolic links: one file libcofem.so (the module loads it by path), not
        # three copies of it under its SONAME and version names
        lib = os.path.join(native, "lib")
        real = os.path.realpath(os.path.join(lib, "libcofem.so"))
        for name in os.listdir(lib):
            path = os.path.join(lib, name)
            if name.startswith("libcofem.so") and path != real:
                os.remove(path)
        os.rename(real, os.path.join(lib, "libcofem.so"))


# setuptools' own build folders away from CMake's build/ of a checkout
WORK = os.path.join("build", "pip")
os.makedirs(WORK, exist_ok=True)
setup(
    version=version(),
    packages=["cofem"],
    package_dir={"": "python"},
    # the extension stands for libcofem: it makes the wheel platform-specific and runs CMakeBuild
    ext_modules=[Extension("cofem._native", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": WORK}, "egg_info": {"egg_base": WORK}},
    zip_safe=False,
)
